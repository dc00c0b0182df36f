// Internal invariant checks. A broken invariant is a bug in autotune, not a user error: abort with a
// message that says where.
#pragma once

#include <cstdio>
#include <cstdlib>

#define AUTOTUNE_CHECK(cond, msg)                                                                    \
  do {                                                                                                \
    if (!(cond)) {                                                                                    \
      std::fprintf(stderr, "autotune internal error at %s:%d: %s (%s)\n", __FILE__, __LINE__, msg, #cond); \
      std::abort();                                                                                   \
    }                                                                                                 \
  } while (0)
