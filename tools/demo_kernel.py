#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A kernel author's view: an attention kernel written with @pypto.frontend.jit, run in SIM
on CPU tensors, checked against torch, with the timing report of the SystemC model.

Run with the project's venv: .venv/bin/python tools/demo_kernel.py
"""
import torch

import pypto

S, D = 256, 64


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM, "device_sched_mode": 1})
def attention(q: pypto.Tensor([S, D], pypto.DT_FP16), k: pypto.Tensor([S, D], pypto.DT_FP16),
              v: pypto.Tensor([S, D], pypto.DT_FP16), o: pypto.Tensor([S, D], pypto.DT_FP16)):
    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
    for i in pypto.loop(S // 64, idx_name="i"):
        qi = pypto.view(q, [64, D], [i * 64, 0])
        scores = pypto.matmul(qi, k, pypto.DT_FP32, b_trans=True)
        pypto.set_vec_tile_shapes(16, S)
        p = pypto.softmax(scores * (1.0 / D ** 0.5), -1)
        o[i * 64:, :] = pypto.matmul(pypto.cast(p, pypto.DT_FP16), v, pypto.DT_FP16)


def main():
    torch.manual_seed(0)
    q, k, v = (torch.randn(S, D).half() for _ in range(3))
    o = torch.zeros(S, D, dtype=torch.float16)
    attention(q, k, v, o)
    ref = (torch.softmax((q.float() @ k.float().T) / D ** 0.5, -1).half().float() @ v.float()).half()
    err = (o.float() - ref.float()).abs().max().item()
    r = attention.last_report
    s = r.stats
    print(f"attention {S}x{D} fp16 in SIM: max |o - torch| = {err:.2e}")
    print(f"  makespan {r.makespan_ns / 1000:.2f} us, {s['tasks']} tasks in {s['device_tasks']} device "
          f"tasks, policy {s['policy']}")
    print(f"  AIC busy {100 * s['cores']['AIC']['utilization']:.1f} %, AIV busy "
          f"{100 * s['cores']['AIV']['utilization']:.1f} %, L2 hit rate {100 * s['l2']['hit_rate']:.1f} %")
    print(f"  reports: {r.path}/{{stats,trace,swim}}.json")
    if err > 2e-2:
        raise SystemExit("demo_kernel: result differs from torch")


if __name__ == "__main__":
    main()
