// OpenBLAS as the peer of gemm and batch_matmul: row-major cblas_sgemm, A[M,K] x B[K,N] (per batch),
// then the epilogue as passes over the output (what a framework's linear layer does around sgemm).
#include "tools/cpu_peer/peer_kernel.h"

#include <fmt/format.h>

#ifdef AUTOTUNE_PEER_OPENBLAS
#include <cblas.h>
#endif

namespace autotune::cpu_peer {

#ifdef AUTOTUNE_PEER_OPENBLAS
Result<PeerKernel> MakeOpenBlasKernel(const SavedWorkload& w, float* out) {
  const std::string op = w.manifest.at("op");
  if (op != "gemm" && op != "batch_matmul") return MakeError("OpenBLAS is the peer of gemm and batch_matmul, not " + op);
  const int64_t batch = op == "batch_matmul" ? w.Param("B") : 1;
  const int64_t M = w.Param("M"), N = w.Param("N"), K = w.Param("K");
  std::vector<const float*> epilogue_inputs;
  for (size_t i = 2; i < w.inputs.size(); ++i) epilogue_inputs.push_back(w.inputs[i].data.data());
  const float* A = w.inputs.at(0).data.data();
  const float* B = w.inputs.at(1).data.data();
  auto call = [=, &w] {
    for (int64_t b = 0; b < batch; ++b) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A + b * M * K, K, B + b * K * N, N, 0.0f,
                  out + b * M * N, N);
    }
    ApplyEpilogue(w.epilogue, epilogue_inputs, batch * M, N, 1, out);
  };
  return PeerKernel{openblas_get_config(), {{"sgemm", call}}};
}
#else
Result<PeerKernel> MakeOpenBlasKernel(const SavedWorkload&, float*) {
  return MakeError("this autotune-cpu-peer was built without OpenBLAS (Debian's libopenblas-dev)");
}
#endif

}  // namespace autotune::cpu_peer
