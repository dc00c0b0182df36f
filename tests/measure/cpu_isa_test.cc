// The instruction sets of `--target cpu:ISA`: names, the compiler flags each selects, what this host runs.
#include "measure/cpu_isa.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace autotune::measure {
namespace {

bool HasFlag(const CpuIsa& isa, const std::string& flag) {
  return std::find(isa.flags.begin(), isa.flags.end(), flag) != isa.flags.end();
}

TEST(CpuIsa, NamesAndUnknownNames) {
  EXPECT_TRUE(FindCpuIsa("generic"));
  auto bad = FindCpuIsa("sse9");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("known: "), std::string::npos) << bad.error().message;
  EXPECT_NE(CpuIsaNames().find("generic"), std::string::npos);
}

TEST(CpuIsa, NativeBuildsForThisHostAndNamesASetItRuns) {
  const CpuIsa native = NativeCpuIsa();
  EXPECT_TRUE(HasFlag(native, "-march=native"));
  auto named = FindCpuIsa(native.name);
  ASSERT_TRUE(named) << native.name;
  EXPECT_TRUE(HostRuns(*named));
  EXPECT_EQ(native.float_lanes, named->float_lanes);
  auto resolved = ResolveCpuIsa("");
  ASSERT_TRUE(resolved);
  EXPECT_EQ(resolved->name, native.name);
  EXPECT_TRUE(HostRuns(*FindCpuIsa("generic")));
}

#if defined(__x86_64__)
TEST(CpuIsa, NamedSetsSelectTheirLevelAndNothingWider) {
  auto avx2 = FindCpuIsa("avx2"), avx512 = FindCpuIsa("avx512"), generic = FindCpuIsa("generic");
  ASSERT_TRUE(avx2 && avx512 && generic);
  EXPECT_TRUE(HasFlag(*avx2, "-march=x86-64-v3"));
  EXPECT_TRUE(HasFlag(*avx512, "-march=x86-64-v4"));
  EXPECT_TRUE(HasFlag(*generic, "-march=x86-64"));
  for (const CpuIsa* isa : {&*avx2, &*avx512, &*generic}) EXPECT_FALSE(HasFlag(*isa, "-march=native")) << isa->name;
  EXPECT_EQ(avx2->float_lanes, 8);
  EXPECT_EQ(avx512->vector_registers, 32);
  EXPECT_EQ(avx2->openblas_coretype, "Haswell");
  // A host that runs AVX-512 runs AVX2 too; one that does not is refused for avx512 with the way out.
  if (HostRuns(*avx512)) {
    EXPECT_TRUE(HostRuns(*avx2));
  }
  if (!HostRuns(*avx512)) {
    auto refused = ResolveCpuIsa("avx512");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("--target cpu"), std::string::npos);
  }
}
#endif

}  // namespace
}  // namespace autotune::measure
