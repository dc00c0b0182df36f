#include "tir/analysis/gpu_validity.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>

#include "tir/analysis/tensor_intrinsics.h"
#include "tir/analysis/unrolled_size.h"
#include "tir/codegen/cuda_kernels.h"
#include "tir/int_arith.h"

namespace autotune::tir {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Bytes of the local arrays live at once: an allocation adds to what its body holds; the parts of a
// sequence or a conditional reuse the same space.
// A fragment (`fragments`) is spread over the 32 lanes of a warp (a split one holds two parts).
int64_t LiveLocalBytes(const Stmt& s, const FragmentMap& fragments) {
  if (!s) return 0;
  switch (s->kind) {
    case StmtKind::kAllocate: {
      const auto* op = As<AllocateNode>(s);
      int64_t own = 0;
      if (op->buffer->scope == Scope::kLocal) {
        const int64_t* n = op->buffer->shape.size() == 1 ? AsConstInt(op->buffer->shape[0]) : nullptr;
        own = n ? MulOrCap(*n, BytesOf(op->buffer->dtype), kMax) : 0;  // the plan rejects non-constant sizes
        if (auto f = fragments.find(op->buffer.get()); f != fragments.end()) own = own / 32 * (f->second.split ? 2 : 1);
      }
      return AddOrCap(own, LiveLocalBytes(op->body, fragments), kMax);
    }
    case StmtKind::kFor: return LiveLocalBytes(As<ForNode>(s)->body, fragments);
    case StmtKind::kIfThenElse: {
      const auto* op = As<IfThenElseNode>(s);
      return std::max(LiveLocalBytes(op->then_case, fragments), LiveLocalBytes(op->else_case, fragments));
    }
    case StmtKind::kSeq: {
      int64_t m = 0;
      for (const auto& c : As<SeqNode>(s)->stmts) m = std::max(m, LiveLocalBytes(c, fragments));
      return m;
    }
    default: return 0;
  }
}

Result<void> CheckKernel(const CudaKernelPlan& k, const GpuLimits& limits, GpuUsage* usage) {
  const int64_t threads = k.ThreadsPerBlock();
  if (threads > limits.max_threads_per_block) {
    return MakeError(fmt::format("{} threads per block exceed the limit of {}", threads, limits.max_threads_per_block));
  }
  const char* axes = "xyz";
  for (int a = 0; a < 3; ++a) {
    if (k.block[a] > limits.max_block_dims[a]) {
      return MakeError(
          fmt::format("blockDim.{} of {} exceeds the limit of {}", axes[a], k.block[a], limits.max_block_dims[a]));
    }
    if (k.grid[a] > limits.max_grid_dims[a]) {
      return MakeError(
          fmt::format("gridDim.{} of {} exceeds the limit of {}", axes[a], k.grid[a], limits.max_grid_dims[a]));
    }
  }
  if (k.shared_bytes > limits.max_shared_bytes_per_block) {
    return MakeError(fmt::format("{} bytes of shared memory per block exceed the limit of {}", k.shared_bytes,
                                 limits.max_shared_bytes_per_block));
  }
  AT_TRY(fragments, FragmentsOf(k.body));
  if (!fragments.empty() && k.block[0] != 32) {
    return MakeError(fmt::format("tensor intrinsics run on warps: blockDim.x must be 32, not {}", k.block[0]));
  }
  const int64_t local = LiveLocalBytes(k.body, fragments);
  if (local > limits.max_local_bytes_per_thread) {
    return MakeError(fmt::format("{} bytes of local arrays per thread exceed the limit of {}", local,
                                 limits.max_local_bytes_per_thread));
  }
  const int64_t registers = AddOrCap((local + 3) / 4, kRegisterOverhead, kMax);
  const int64_t warps_threads = (threads + 31) / 32 * 32;
  const int64_t budget = std::min(limits.max_registers_per_thread, limits.max_registers_per_block / warps_threads);
  if (registers > budget) {
    return MakeError(fmt::format("an estimated {} registers per thread exceed the budget of {} ({} threads per block)",
                                 registers, budget, threads));
  }
  const int64_t statements = UnrolledStatementCount(k.body, CudaFullyUnrolls);
  if (statements > limits.max_unrolled_statements) {
    return MakeError(fmt::format("{} statements of fully unrolled code exceed the limit of {}", statements,
                                 limits.max_unrolled_statements));
  }
  usage->threads_per_block = std::max(usage->threads_per_block, threads);
  usage->shared_bytes = std::max(usage->shared_bytes, k.shared_bytes);
  usage->local_bytes_per_thread = std::max(usage->local_bytes_per_thread, local);
  usage->estimated_registers = std::max(usage->estimated_registers, registers);
  usage->unrolled_statements = std::max(usage->unrolled_statements, statements);
  return {};
}

}  // namespace

Result<GpuUsage> CheckGpuValidity(const PrimFunc& lowered, const GpuLimits& limits) {
  auto plan = PlanCudaModule(lowered);
  if (!plan) return plan.error();
  GpuUsage usage;
  usage.kernels = static_cast<int>(plan->kernels.size());
  for (size_t i = 0; i < plan->kernels.size(); ++i) {
    auto r = CheckKernel(plan->kernels[i], limits, &usage);
    if (!r) {
      if (plan->kernels.size() == 1) return r.error();
      return MakeError(fmt::format("kernel {}: {}", i, r.error().message));
    }
  }
  return usage;
}

}  // namespace autotune::tir
