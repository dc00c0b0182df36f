// Checks a hand-built rounding kernel on the C path: it builds, its source calls the helpers under
// test, and every output equals the host's reference exactly (each value is exact in float).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "measure/c_builder.h"
#include "measure/cpu_runner.h"
#include "tests/measure/test_kernels.h"

namespace autotune::measure {

inline void ExpectExactOnCPath(const tir::PrimFunc& func, const tir::Workload& workload,
                               const std::vector<std::string>& helpers) {
  std::string dir = (std::filesystem::temp_directory_path() / "exact_on_c_path-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const MeasureConfig c = test_kernels::QuickCpuConfig(dir, 1);
  auto built = CBuilder(c).Build({BuildInput::FromFunc(func)});
  ASSERT_TRUE(built[0].ok()) << built[0].error_message;
  for (const std::string& helper : helpers) EXPECT_NE(built[0].source.find(helper), std::string::npos) << helper;
  auto res = CpuRunner(c).Run(workload, built);
  EXPECT_TRUE(res[0].ok()) << res[0].error_message << "\n" << built[0].source;
  EXPECT_TRUE(res[0].correct) << res[0].error_message;
  EXPECT_EQ(res[0].max_rel_error, 0.0) << "every rounded value is exact";
  std::filesystem::remove_all(dir);
}

}  // namespace autotune::measure
