#include "db/lookup/kernel_source.h"

#include "tir/analysis/gpu_validity.h"
#include "tir/codegen/codegen_c.h"
#include "tir/codegen/codegen_cuda.h"
#include "tir/lower/lower.h"

namespace autotune::db {

std::string KernelEntryName(const tir::Workload& workload) {
  return "autotune_" + workload.op + "_" + workload.Key().substr(0, 12);
}

Result<KernelSource> GenerateKernelSource(const tir::Schedule& schedule) {
  tir::LowerOptions options;
  options.name = KernelEntryName(schedule.workload());
  auto func = tir::Lower(schedule.state(), options);
  if (!func) return func.error();
  KernelSource out;
  if (schedule.target() == tir::TargetKind::kCuda) {
    if (auto usage = tir::CheckGpuValidity(*func); !usage) return usage.error();
    auto module = tir::CodegenCuda(*func);
    if (!module) return module.error();
    out.language = "cuda";
    out.code = std::move(module->code);
    out.launches = std::move(module->kernels);
    out.num_params = module->num_params;
    out.workspace_bytes = std::move(module->workspace_bytes);
    return out;
  }
  auto c = tir::CodegenC(*func);
  if (!c) return c.error();
  out.language = "c";
  out.code = std::move(c->code);
  out.launches.push_back(tir::CudaKernelLaunch{c->entry, {1, 1, 1}, {1, 1, 1}, 0});
  out.num_params = static_cast<int>(func->params.size());
  for (size_t i = 0; i < func->packs.size(); ++i) {
    const tir::PackedParam& p = func->packs[i];
    KernelPack pack{p.param, c->pack_entries[i], {}, tir::PackedElements(p) * tir::BytesOf(p.packed->dtype)};
    for (const auto& e : p.packed->shape) pack.shape.push_back(*tir::AsConstInt(e));
    out.packs.push_back(std::move(pack));
  }
  return out;
}

}  // namespace autotune::db
