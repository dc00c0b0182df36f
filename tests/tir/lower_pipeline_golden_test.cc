// Golden text of the main lowering steps for a GPU-style schedule with every feature: a local
// accumulator (cache_write), a shared-memory copy loaded cooperatively by the block's threads, a
// virtual thread, a fused epilogue and partial tiles. Review a diff here like a code change: the text
// is what codegen and the cost model see.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/printer.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {
namespace {

std::map<std::string, std::string> LowerSteps() {
  auto w = MakeWorkload("gemm", "M=8,N=6,K=4", "relu");
  EXPECT_TRUE(w);
  Schedule s(*w, TargetKind::kCuda);
  auto C = *s.GetStage("C");
  auto local = *s.CacheWrite(C, Scope::kLocal);
  auto As = *s.CacheReadInput("A", Scope::kShared, {local});
  auto E = *s.GetStage("C_relu");
  EXPECT_TRUE(s.ReverseComputeInline(E));
  auto l = *s.GetLoops(C);
  auto i = *s.Split(l[0], {int64_t{2}, int64_t{2}, int64_t{2}});
  auto j = *s.Split(l[1], {std::monostate{}, int64_t{3}});
  EXPECT_TRUE(s.Reorder({i[0], i[1], j[0], i[2], j[1]}));
  EXPECT_TRUE(s.Bind(i[0], ThreadTag::kBlockIdxX));
  EXPECT_TRUE(s.Bind(i[1], ThreadTag::kVThread));
  auto tx = *s.Fuse({j[0], i[2]});
  EXPECT_TRUE(s.Bind(tx, ThreadTag::kThreadIdxX));
  EXPECT_TRUE(s.ComputeAt(local, tx));
  auto ll = *s.GetLoops(local);
  auto k = *s.Split(ll[2], {std::monostate{}, int64_t{2}});
  EXPECT_TRUE(s.Reorder({k[0], ll[0], ll[1], k[1]}));
  EXPECT_TRUE(s.ComputeAt(As, k[0]));
  auto al = *s.GetLoops(As);
  auto f = *s.Fuse({al[0], al[1]});
  auto parts = *s.Split(f, {std::monostate{}, int64_t{4}});
  EXPECT_TRUE(s.Bind(parts[1], ThreadTag::kThreadIdxX));
  std::map<std::string, std::string> steps;
  LowerOptions opt;
  opt.dump = [&](const std::string& step, const PrimFunc& f) { steps[step] = ToString(f.body); };
  auto r = Lower(s.state(), opt);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return steps;
}

TEST(LowerPipelineGolden, ScheduleOps) {
  EXPECT_EQ(LowerSteps().at("schedule_ops"), R"(for (i_0: int32, 0, 2) thread_binding "blockIdx.x" {
  for (i_1: int32, 0, 2) thread_binding "vthread" {
    for (j_0_i_2: int32, 0, 4) thread_binding "threadIdx.x" {
      allocate C_local: float32[1, 3] local {
        for (i: int32, 0, 1) serial {
          for (j: int32, 0, 3) serial {
            C_local[i, j] = 0f
          }
        }
        for (k_0: int32, 0, 2) serial {
          allocate A_shared: float32[4, 2] shared {
            for (ax0_ax1_0: int32, 0, 2) serial {
              A_shared[floordiv(((ax0_ax1_0 * 4) + j_0_i_2), 2), floormod(((ax0_ax1_0 * 4) + j_0_i_2), 2)] = A[(((i_0 * 4) + (ax0_ax1_0 * 2)) + floordiv(j_0_i_2, 2)), ((k_0 * 2) + floormod(j_0_i_2, 2))]
            }
            for (i: int32, 0, 1) serial {
              for (j: int32, 0, 3) serial {
                for (k_1: int32, 0, 2) serial {
                  C_local[i, j] = (C_local[i, j] + (A_shared[(((((i_0 * 4) + (i_1 * 2)) + floormod(j_0_i_2, 2)) + i) - (i_0 * 4)), (((k_0 * 2) + k_1) - (k_0 * 2))] * B[((k_0 * 2) + k_1), ((floordiv(j_0_i_2, 2) * 3) + j)]))
                }
              }
            }
          }
        }
        for (j_1: int32, 0, 3) serial {
          C_relu[(((i_0 * 4) + (i_1 * 2)) + floormod(j_0_i_2, 2)), ((floordiv(j_0_i_2, 2) * 3) + j_1)] = max(C_local[((((i_0 * 4) + (i_1 * 2)) + floormod(j_0_i_2, 2)) - (((i_0 * 4) + (i_1 * 2)) + floormod(j_0_i_2, 2))), (((floordiv(j_0_i_2, 2) * 3) + j_1) - (floordiv(j_0_i_2, 2) * 3))], 0f)
        }
      }
    }
  }
}
)");
}

TEST(LowerPipelineGolden, InjectVirtualThread) {
  EXPECT_EQ(LowerSteps().at("inject_virtual_thread"), R"(for (i_0: int32, 0, 2) thread_binding "blockIdx.x" {
  for (j_0_i_2: int32, 0, 4) thread_binding "threadIdx.x" {
    allocate C_local: float32[2, 1, 3] local {
      for (j: int32, 0, 3) serial {
        for (i_1: int32, 0, 2) unrolled {
          C_local[i_1, 0, j] = 0f
        }
      }
      for (k_0: int32, 0, 2) serial {
        allocate A_shared: float32[4, 2] shared {
          for (ax0_ax1_0: int32, 0, 2) serial {
            A_shared[((ax0_ax1_0 * 2) + floordiv(j_0_i_2, 2)), floormod(j_0_i_2, 2)] = A[(((i_0 * 4) + (ax0_ax1_0 * 2)) + floordiv(j_0_i_2, 2)), ((k_0 * 2) + floormod(j_0_i_2, 2))]
          }
          for (j: int32, 0, 3) serial {
            for (k_1: int32, 0, 2) serial {
              for (i_1_1: int32, 0, 2) unrolled {
                C_local[i_1_1, 0, j] = (C_local[i_1_1, 0, j] + (A_shared[((i_1_1 * 2) + floormod(j_0_i_2, 2)), k_1] * B[((k_0 * 2) + k_1), ((floordiv(j_0_i_2, 2) * 3) + j)]))
              }
            }
          }
        }
      }
      for (j_1: int32, 0, 3) serial {
        for (i_1_2: int32, 0, 2) unrolled {
          C_relu[(((i_0 * 4) + (i_1_2 * 2)) + floormod(j_0_i_2, 2)), ((floordiv(j_0_i_2, 2) * 3) + j_1)] = max(C_local[i_1_2, 0, j_1], 0f)
        }
      }
    }
  }
}
)");
}

TEST(LowerPipelineGolden, InsertBarriers) {
  EXPECT_EQ(LowerSteps().at("insert_barriers"), R"(for (i_0: int32, 0, 2) thread_binding "blockIdx.x" {
  allocate A_shared: float32[8] shared {
    for (j_0_i_2: int32, 0, 4) thread_binding "threadIdx.x" {
      allocate C_local: float32[6] local {
        for (j: int32, 0, 3) serial {
          for (i_1: int32, 0, 2) unrolled {
            C_local[((i_1 * 3) + j)] = 0f
          }
        }
        for (k_0: int32, 0, 2) serial {
          barrier()
          for (ax0_ax1_0: int32, 0, 2) serial {
            A_shared[((ax0_ax1_0 * 4) + j_0_i_2)] = A[(((((i_0 * 16) + (ax0_ax1_0 * 8)) + (floordiv(j_0_i_2, 2) * 4)) + (k_0 * 2)) + floormod(j_0_i_2, 2))]
          }
          barrier()
          for (j: int32, 0, 3) serial {
            for (k_1: int32, 0, 2) serial {
              for (i_1_1: int32, 0, 2) unrolled {
                C_local[((i_1_1 * 3) + j)] = (C_local[((i_1_1 * 3) + j)] + (A_shared[(((i_1_1 * 4) + (floormod(j_0_i_2, 2) * 2)) + k_1)] * B[((((k_0 * 12) + (k_1 * 6)) + (floordiv(j_0_i_2, 2) * 3)) + j)]))
              }
            }
          }
        }
        for (j_1: int32, 0, 3) serial {
          for (i_1_2: int32, 0, 2) unrolled {
            C_relu[(((((i_0 * 24) + (i_1_2 * 12)) + (floormod(j_0_i_2, 2) * 6)) + (floordiv(j_0_i_2, 2) * 3)) + j_1)] = max(C_local[((i_1_2 * 3) + j_1)], 0f)
          }
        }
      }
    }
  }
}
)");
}

TEST(LowerPipelineGolden, FinalSimplify) {
  EXPECT_EQ(LowerSteps().at("final_simplify"), R"(for (i_0: int32, 0, 2) thread_binding "blockIdx.x" {
  allocate A_shared: float32[8] shared {
    for (j_0_i_2: int32, 0, 4) thread_binding "threadIdx.x" {
      allocate C_local: float32[6] local {
        for (j: int32, 0, 3) serial {
          for (i_1: int32, 0, 2) unrolled {
            C_local[((i_1 * 3) + j)] = 0f
          }
        }
        for (k_0: int32, 0, 2) serial {
          barrier()
          for (ax0_ax1_0: int32, 0, 2) serial {
            A_shared[((ax0_ax1_0 * 4) + j_0_i_2)] = A[(((((i_0 * 16) + (ax0_ax1_0 * 8)) + (floordiv(j_0_i_2, 2) * 4)) + (k_0 * 2)) + floormod(j_0_i_2, 2))]
          }
          barrier()
          for (j: int32, 0, 3) serial {
            for (k_1: int32, 0, 2) serial {
              for (i_1_1: int32, 0, 2) unrolled {
                C_local[((i_1_1 * 3) + j)] = (C_local[((i_1_1 * 3) + j)] + (A_shared[(((i_1_1 * 4) + (floormod(j_0_i_2, 2) * 2)) + k_1)] * B[((((k_0 * 12) + (k_1 * 6)) + (floordiv(j_0_i_2, 2) * 3)) + j)]))
              }
            }
          }
        }
        for (j_1: int32, 0, 3) serial {
          for (i_1_2: int32, 0, 2) unrolled {
            C_relu[(((((i_0 * 24) + (i_1_2 * 12)) + (floormod(j_0_i_2, 2) * 6)) + (floordiv(j_0_i_2, 2) * 3)) + j_1)] = max(C_local[((i_1_2 * 3) + j_1)], 0f)
          }
        }
      }
    }
  }
}
)");
}

TEST(LowerPipelineGolden, StepsRunInOrder) {
  std::vector<std::string> order;
  auto w = MakeWorkload("gemm", "M=4,N=4,K=4");
  ASSERT_TRUE(w);
  Schedule s(*w, TargetKind::kCpu);
  LowerOptions opt;
  opt.dump = [&](const std::string& step, const PrimFunc&) { order.push_back(step); };
  ASSERT_TRUE(Lower(s.state(), opt));
  EXPECT_EQ(order, (std::vector<std::string>{"schedule_ops", "simplify", "inject_virtual_thread", "lift_shared_allocations",
                                             "storage_flatten", "insert_barriers", "double_buffer", "unroll_loops", "final_simplify"}));
}

// A shared copy computed per tile of 4 rows: its rows run past the tensor in the last tile of 10
// rows, so the copy keeps the guard there; with 8 rows the loop ranges prove it, and it is left out.
std::string TileCopyAtScheduleOps(int64_t rows) {
  auto w = MakeWorkload("gemm", "M=" + std::to_string(rows) + ",N=4,K=4", "");
  EXPECT_TRUE(w);
  Schedule s(*w, TargetKind::kCuda);
  auto C = *s.GetStage("C");
  auto As = *s.CacheReadInput("A", Scope::kShared, {C});
  auto i = *s.Split((*s.GetLoops(C))[0], {std::monostate{}, int64_t{4}});
  EXPECT_TRUE(s.ComputeAt(As, i[0]));
  std::string text;
  LowerOptions opt;
  opt.dump = [&](const std::string& step, const PrimFunc& f) {
    if (step == "schedule_ops") text = ToString(f.body);
  };
  EXPECT_TRUE(Lower(s.state(), opt));
  return text;
}

TEST(LowerPipelineGolden, AnAttachedCopyIsGuardedOnlyWhereItsTileReachesPastTheTensor) {
  const std::string partial = TileCopyAtScheduleOps(10);
  EXPECT_NE(partial.find(R"(        if (((i_0 * 4) + ax0) < 10) {
          A_shared[ax0, ax1] = A[((i_0 * 4) + ax0), ax1]
        })"),
            std::string::npos)
      << partial;
  const std::string whole = TileCopyAtScheduleOps(8);
  EXPECT_NE(whole.find("      for (ax1: int32, 0, 4) serial {\n        A_shared[ax0, ax1] = A[((i_0 * 4) + ax0), ax1]\n"),
            std::string::npos)
      << whole;
  EXPECT_EQ(whole.find("if ("), std::string::npos) << whole;
}

}  // namespace
}  // namespace autotune::tir
