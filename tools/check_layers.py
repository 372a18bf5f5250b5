#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails (exit 1) when a library links one above it, and names every such link.

The order is README.md's architecture map: each folder uses only the ones listed below it.
The links are the target_link_libraries of every CMakeLists.txt outside tests/; a target
belongs to the deepest folder of the map that holds its CMakeLists.txt. A target in a folder
the map does not list fails too, so that the map names every library.
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def map_order():
    """The folders of the architecture map, top first."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Architecture", 1)[1]
    block = section.split("```", 2)[1]
    return [m.group(1) for m in re.finditer(r"^([a-z_]+(?:/[a-z_]+)*)/\s", block, re.M)]


def calls(text, command):
    """The argument lists of every `command(...)` call (comments removed)."""
    text = re.sub(r"#[^\n]*", "", text)
    return [m.group(1).split() for m in re.finditer(command + r"\(([^)]*)\)", text)]


def main():
    order = map_order()
    rank = {folder: i for i, folder in enumerate(order)}
    lists = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                            "CMakeLists.txt", "*/CMakeLists.txt"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    owner, links, problems = {}, [], []
    for path in lists:
        folder = str(pathlib.PurePosixPath(path).parent)
        if folder == "." or folder.split("/")[0] == "tests":
            continue
        text = (ROOT / path).read_text()
        home = max((f for f in order if folder == f or folder.startswith(f + "/")), key=len,
                   default=None)
        for cmd in ("add_library", "add_executable", "pybind11_add_module"):
            for args in calls(text, cmd):
                if home is None:
                    problems.append(f"{path}: target {args[0]} is in {folder}/, which the "
                                    "architecture map of README.md does not list")
                owner[args[0]] = home
        for args in calls(text, "target_link_libraries"):
            links += [(args[0], lib, path) for lib in args[1:]]
    links = [(u, v, p) for u, v, p in links if owner.get(u) and owner.get(v)]
    for user, used, path in links:
        if owner[user] != owner[used] and rank[owner[used]] < rank[owner[user]]:
            problems.append(f"{path}: {user} ({owner[user]}/) links {used} "
                            f"({owner[used]}/), which the map puts above it")
    if problems:
        print("check_layers: " + str(len(problems)) + " problem(s):")
        for p in problems:
            print("  " + p)
        return 1
    print(f"check_layers: {len(links)} links of {len(owner)} targets run down the map")
    return 0


if __name__ == "__main__":
    sys.exit(main())
