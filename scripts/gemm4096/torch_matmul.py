import sys
import time

import torch
torch.backends.cuda.matmul.allow_tf32 = False
a = torch.rand(4096, 4096, device="cuda") * 2 - 1
b = torch.rand(4096, 4096, device="cuda") * 2 - 1
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
if len(sys.argv) == 3 and sys.argv[1] == "sustain":  # back to back for S seconds (clock and power)
    end = time.time() + float(sys.argv[2])
    n = 0
    while time.time() < end:
        for _ in range(20):
            c = torch.matmul(a, b)
        torch.cuda.synchronize()
        n += 20
    print(f"sustained torch.matmul: {n} launches")
    sys.exit(0)
e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
ms = []
for r in range(25):
    flush.fill_(r)
    e0.record(); c = torch.matmul(a, b); e1.record(); e1.synchronize()
    if r >= 3: ms.append(e0.elapsed_time(e1))
ms.sort(); med = ms[len(ms) // 2]
print(f"torch.matmul (cuBLAS, TF32 off)            median {med:.4f} ms  {2 * 4096**3 / med / 1e9:.1f} TFLOP/s")
