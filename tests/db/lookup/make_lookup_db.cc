// Writes the lookup fixture database (tests/db/lookup/lookup_fixture.h) for the C tests.
#include <cstdio>
#include <string>

#include "tests/db/lookup/lookup_fixture.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_lookup_db PATH\n");
    return 2;
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((std::string(argv[1]) + suffix).c_str());
  auto ok = autotune::db::testing::WriteLookupFixture(argv[1]);
  if (!ok) {
    std::fprintf(stderr, "make_lookup_db: %s\n", ok.error().message.c_str());
    return 1;
  }
  return 0;
}
