# SPDX-License-Identifier: Apache-2.0
"""The comparison tables of tools/board_cases.py and tools/board_models.py: each case's SIM
figure against its board time, and each tuning step's factor on both."""
import json


def report(rows, steps_spec, json_path=None):
    """Prints the tables of `rows` (case name -> {case, board_us, sim_us, ratio, makespan_us,
    tasks, where}, and `figure`, what sim_us measures, where it is not the AICore end to end)
    and of the steps of `steps_spec` ((from, to, what)) whose two cases ran; writes both to
    `json_path` when given. Returns the steps."""
    print("| case | board (us) | SIM (us) | SIM / board | figure | SIM makespan (us) "
          "| leaf tasks | what |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows.values():
        print(f"| {r['case']} | {r['board_us']:g} | {r['sim_us']:g} | {r['ratio']:.2f} | "
              f"{r.get('figure', 'AICore end to end')} | {r['makespan_us']:g} | {r['tasks']} | "
              f"{r['where']} |")
    steps = []
    for f, t, what in steps_spec:
        if f in rows and t in rows:
            board = rows[t]["board_us"] / rows[f]["board_us"]
            sim = rows[t]["sim_us"] / rows[f]["sim_us"]
            steps.append({"from": f, "to": t, "what": what, "board_factor": round(board, 3),
                          "sim_factor": round(sim, 3), "same_direction": (board < 1) == (sim < 1),
                          "factor_error": round(sim / board, 3)})
    if steps:
        print()
        print("| step | board factor | SIM factor | same direction | SIM / board factor |")
        print("|---|---|---|---|---|")
        for s in steps:
            print(f"| {s['from']} -> {s['to']} ({s['what']}) | {s['board_factor']:.3f} | "
                  f"{s['sim_factor']:.3f} | {'yes' if s['same_direction'] else 'no'} | "
                  f"{s['factor_error']:.2f} |")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump({"cases": list(rows.values()), "steps": steps}, f, indent=1)
    return steps
