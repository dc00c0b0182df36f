// The C ABI of include/autotune/lookup.h over KernelLookup. No exception crosses it: each entry
// point turns one into AUTOTUNE_INTERNAL_ERROR with its message.
#include "autotune/lookup.h"

#include <exception>
#include <memory>
#include <string>

#include "db/lookup/kernel_lookup.h"
#include "db/lookup/kernel_runtime.h"
#include "tir/version.h"

struct autotune_db {
  std::unique_ptr<autotune::db::KernelLookup> lookup;
};

struct autotune_module {
  std::unique_ptr<autotune::db::KernelModule> module;
};

namespace {

using autotune::db::LookupAnswer;

thread_local std::string last_error;

autotune_status Fail(autotune_status status, std::string message) {
  last_error = std::move(message);
  return status;
}

const LookupAnswer* Answer(const autotune_kernel* k) { return reinterpret_cast<const LookupAnswer*>(k); }

const autotune::tir::CudaKernelLaunch* Launch(const autotune_kernel* k, int i) {
  if (!k || i < 0 || i >= static_cast<int>(Answer(k)->kernel.launches.size())) return nullptr;
  return &Answer(k)->kernel.launches[i];
}

void CopyDims(const std::array<int64_t, 3>* from, int64_t dims[3]) {
  if (!dims) return;
  for (int d = 0; d < 3; ++d) dims[d] = from ? (*from)[d] : 1;
}

}  // namespace

extern "C" {

int autotune_lookup_abi_version(void) { return AUTOTUNE_LOOKUP_ABI_VERSION; }
const char* autotune_version(void) { return autotune::kVersion; }
const char* autotune_last_error(void) { return last_error.c_str(); }

autotune_status autotune_db_open(const char* path, autotune_db** out) {
  if (out) *out = nullptr;
  if (!path || !out) return Fail(AUTOTUNE_INVALID_ARGUMENT, "autotune_db_open: path and out must not be null");
  try {
    auto lookup = autotune::db::KernelLookup::Open(path);
    if (!lookup) return Fail(AUTOTUNE_DB_ERROR, lookup.error().message);
    *out = new autotune_db{std::move(*lookup)};
    return AUTOTUNE_OK;
  } catch (const std::exception& e) {
    return Fail(AUTOTUNE_INTERNAL_ERROR, std::string("autotune_db_open: ") + e.what());
  }
}

void autotune_db_close(autotune_db* db) { delete db; }

int64_t autotune_db_num_records(const autotune_db* db) {
  return db ? static_cast<int64_t>(db->lookup->num_records()) : 0;
}

autotune_status autotune_lookup(autotune_db* db, const char* op, const char* shape, const char* epilogue,
                                const char* target, unsigned flags, const autotune_kernel** out) {
  return autotune_lookup_dtype(db, op, shape, epilogue, nullptr, target, flags, out);
}

autotune_status autotune_lookup_dtype(autotune_db* db, const char* op, const char* shape, const char* epilogue,
                                      const char* dtype, const char* target, unsigned flags,
                                      const autotune_kernel** out) {
  if (out) *out = nullptr;
  if (!db || !op || !shape || !target || !out) {
    return Fail(AUTOTUNE_INVALID_ARGUMENT, "autotune_lookup: db, op, shape, target and out must not be null");
  }
  if (flags & ~AUTOTUNE_LOOKUP_NEAREST) return Fail(AUTOTUNE_INVALID_ARGUMENT, "autotune_lookup: unknown flags");
  try {
    autotune::db::LookupQuery q{op, shape, epilogue ? epilogue : "", target, (flags & AUTOTUNE_LOOKUP_NEAREST) != 0,
                                dtype ? dtype : "float32"};
    autotune::db::LookupResult r = db->lookup->Find(q);
    switch (r.status) {
      case autotune::db::LookupStatus::kOk:
        *out = reinterpret_cast<const autotune_kernel*>(r.answer);
        return AUTOTUNE_OK;
      case autotune::db::LookupStatus::kNotFound:
        return Fail(AUTOTUNE_NOT_FOUND, std::move(r.message));
      case autotune::db::LookupStatus::kInvalidArgument:
        return Fail(AUTOTUNE_INVALID_ARGUMENT, std::move(r.message));
    }
    return Fail(AUTOTUNE_INTERNAL_ERROR, "autotune_lookup: unknown status");
  } catch (const std::exception& e) {
    return Fail(AUTOTUNE_INTERNAL_ERROR, std::string("autotune_lookup: ") + e.what());
  }
}

int autotune_kernel_is_exact(const autotune_kernel* k) { return k && Answer(k)->exact ? 1 : 0; }
const char* autotune_kernel_language(const autotune_kernel* k) { return k ? Answer(k)->kernel.language.c_str() : nullptr; }
const char* autotune_kernel_source(const autotune_kernel* k) { return k ? Answer(k)->kernel.code.c_str() : nullptr; }
int autotune_kernel_num_launches(const autotune_kernel* k) {
  return k ? static_cast<int>(Answer(k)->kernel.launches.size()) : 0;
}
const char* autotune_kernel_entry(const autotune_kernel* k, int launch) {
  const auto* l = Launch(k, launch);
  return l ? l->entry.c_str() : nullptr;
}
void autotune_kernel_grid(const autotune_kernel* k, int launch, int64_t dims[3]) {
  const auto* l = Launch(k, launch);
  CopyDims(l ? &l->grid : nullptr, dims);
}
void autotune_kernel_block(const autotune_kernel* k, int launch, int64_t dims[3]) {
  const auto* l = Launch(k, launch);
  CopyDims(l ? &l->block : nullptr, dims);
}
int64_t autotune_kernel_dynamic_shared_bytes(const autotune_kernel* k, int launch) {
  const auto* l = Launch(k, launch);
  return l ? l->dynamic_shared_bytes : 0;
}
int autotune_kernel_num_params(const autotune_kernel* k) { return k ? Answer(k)->kernel.num_params : 0; }
int autotune_kernel_num_outputs(const autotune_kernel* k) { return k ? Answer(k)->num_outputs : 0; }
int autotune_kernel_num_workspaces(const autotune_kernel* k) {
  return k ? static_cast<int>(Answer(k)->kernel.workspace_bytes.size()) : 0;
}
int64_t autotune_kernel_workspace_bytes(const autotune_kernel* k, int workspace) {
  if (!k || workspace < 0 || workspace >= autotune_kernel_num_workspaces(k)) return 0;
  return Answer(k)->kernel.workspace_bytes[workspace];
}
double autotune_kernel_latency_ms(const autotune_kernel* k) { return k ? Answer(k)->latency_ms : 0; }
double autotune_kernel_gflops(const autotune_kernel* k) { return k ? Answer(k)->gflops : 0; }
double autotune_kernel_estimated_latency_ms(const autotune_kernel* k) { return k ? Answer(k)->estimated_latency_ms : 0; }
const char* autotune_kernel_measured_workload(const autotune_kernel* k) { return k ? Answer(k)->measured.c_str() : nullptr; }
const char* autotune_kernel_target(const autotune_kernel* k) { return k ? Answer(k)->target.c_str() : nullptr; }
const char* autotune_kernel_trace(const autotune_kernel* k) { return k ? Answer(k)->trace_json.c_str() : nullptr; }

int64_t autotune_kernel_pointer_alignment(const autotune_kernel* k) {
  return k ? autotune::db::KernelPointerAlignment(Answer(k)->kernel.language) : 0;
}

autotune_status autotune_module_load(const autotune_kernel* k, autotune_module** out) {
  if (out) *out = nullptr;
  if (!k || !out) return Fail(AUTOTUNE_INVALID_ARGUMENT, "autotune_module_load: k and out must not be null");
  try {
    auto m = autotune::db::KernelModule::Load(Answer(k)->kernel);
    if (!m) return Fail(AUTOTUNE_RUNTIME_ERROR, m.error().message);
    *out = new autotune_module{std::move(*m)};
    return AUTOTUNE_OK;
  } catch (const std::exception& e) {
    return Fail(AUTOTUNE_INTERNAL_ERROR, std::string("autotune_module_load: ") + e.what());
  }
}

namespace {
// Both launches: a null module or bad tensors are invalid arguments, a failed run a runtime error.
autotune_status LaunchModule(autotune_module* m, void* const* tensors, int num_tensors, void* stream, bool packed) {
  const std::string name = packed ? "autotune_module_launch_packed" : "autotune_module_launch";
  if (!m) return Fail(AUTOTUNE_INVALID_ARGUMENT, name + ": the module must not be null");
  try {
    if (auto ok = m->module->CheckArgs(tensors, num_tensors); !ok) return Fail(AUTOTUNE_INVALID_ARGUMENT, ok.error().message);
    auto r = packed ? m->module->LaunchPacked(tensors, num_tensors, stream) : m->module->Launch(tensors, num_tensors, stream);
    if (!r) return Fail(AUTOTUNE_RUNTIME_ERROR, r.error().message);
    return AUTOTUNE_OK;
  } catch (const std::exception& e) {
    return Fail(AUTOTUNE_INTERNAL_ERROR, name + ": " + e.what());
  }
}
}  // namespace

autotune_status autotune_module_launch(autotune_module* m, void* const* tensors, int num_tensors, void* stream) {
  return LaunchModule(m, tensors, num_tensors, stream, false);
}

autotune_status autotune_module_launch_packed(autotune_module* m, void* const* tensors, int num_tensors, void* stream) {
  return LaunchModule(m, tensors, num_tensors, stream, true);
}

autotune_status autotune_module_pack(autotune_module* m, int pack, const void* tensor, void* packed) {
  if (!m) return Fail(AUTOTUNE_INVALID_ARGUMENT, "autotune_module_pack: the module must not be null");
  try {
    auto r = m->module->Pack(pack, tensor, packed);
    if (!r) return Fail(AUTOTUNE_INVALID_ARGUMENT, r.error().message);
    return AUTOTUNE_OK;
  } catch (const std::exception& e) {
    return Fail(AUTOTUNE_INTERNAL_ERROR, std::string("autotune_module_pack: ") + e.what());
  }
}

const char* autotune_module_build_options(const autotune_module* m) {
  return m ? m->module->build_options().c_str() : nullptr;
}

void autotune_module_free(autotune_module* m) { delete m; }

namespace {
// Dimension `dim` of a shape; 0 out of range.
int64_t DimOf(const std::vector<int64_t>& shape, int dim) {
  return dim >= 0 && dim < static_cast<int>(shape.size()) ? shape[dim] : 0;
}
const autotune::tir::TensorSpec* Tensor(const autotune_kernel* k, int i) {
  if (!k || i < 0 || i >= static_cast<int>(Answer(k)->tensors.size())) return nullptr;
  return &Answer(k)->tensors[i];
}
}  // namespace

const char* autotune_kernel_tensor_name(const autotune_kernel* k, int tensor) {
  const auto* t = Tensor(k, tensor);
  return t ? t->name.c_str() : nullptr;
}
const char* autotune_kernel_tensor_dtype(const autotune_kernel* k, int tensor) {
  const auto* t = Tensor(k, tensor);
  return t ? autotune::tir::DTypeName(t->dtype) : nullptr;
}
int autotune_kernel_tensor_rank(const autotune_kernel* k, int tensor) {
  const auto* t = Tensor(k, tensor);
  return t ? static_cast<int>(t->shape.size()) : 0;
}
int64_t autotune_kernel_tensor_dim(const autotune_kernel* k, int tensor, int dim) {
  const auto* t = Tensor(k, tensor);
  return t ? DimOf(t->shape, dim) : 0;
}

namespace {
const autotune::db::KernelPack* Pack(const autotune_kernel* k, int i) {
  if (!k || i < 0 || i >= static_cast<int>(Answer(k)->kernel.packs.size())) return nullptr;
  return &Answer(k)->kernel.packs[i];
}
}  // namespace

int autotune_kernel_num_packed(const autotune_kernel* k) { return k ? static_cast<int>(Answer(k)->kernel.packs.size()) : 0; }
int autotune_kernel_packed_tensor(const autotune_kernel* k, int pack) {
  const auto* p = Pack(k, pack);
  return p ? p->param : -1;
}
const char* autotune_kernel_pack_entry(const autotune_kernel* k, int pack) {
  const auto* p = Pack(k, pack);
  return p ? p->entry.c_str() : nullptr;
}
int autotune_kernel_packed_rank(const autotune_kernel* k, int pack) {
  const auto* p = Pack(k, pack);
  return p ? static_cast<int>(p->shape.size()) : 0;
}
int64_t autotune_kernel_packed_dim(const autotune_kernel* k, int pack, int dim) {
  const auto* p = Pack(k, pack);
  return p ? DimOf(p->shape, dim) : 0;
}

}  // extern "C"
