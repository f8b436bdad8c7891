#!/usr/bin/env python3
"""The shape of the libraries (docs/ARCHITECTURE.md, issue 44), checked:

- no source file (.cpp .hpp .h .c .inc) over 500 lines in topology/, reports/, cluster/, doctor/;
- in topology/ and reports/ every source lies in a folder of the table below, and every
  `#include "..."` runs to the same folder or a lower one, never to a higher one.

A public header (include/gdsb/topo/x.hpp, include/gdsb/report/x.hpp) stays where other code
includes it; its folder is named in the table below (public_folder). A private header is found
by its plain name in its library's src/ folders (each a private include directory of it).

usage: check_layers.py ROOT     exit 0 when the shape holds, 3 with each breach named, 2 usage.
"""
import os
import re
import sys

MAX_LINES = 500
SOURCE_EXT = (".cpp", ".hpp", ".h", ".c", ".inc")
LINE_TREES = ("topology", "reports", "cluster", "doctor")

# Folders of each library, lowest first: a file may include its own folder and those before it.
LIBRARIES = {
    "topology": {
        "src": "topology/src",
        "public": "topology/include/gdsb/topo",
        "prefix": "gdsb/topo/",
        "floors": ["model", "fingerprint", "sources", "paths", "faults", "checks", "health",
                   "render"],
        "public_folder": {
            "model": "model.hpp hw_faults.hpp pci_config.hpp analysis.hpp nic_role.hpp nvlink.hpp said_together.hpp",
            "fingerprint": "fingerprint.hpp fingerprint_file.hpp",
            "sources": "collect.hpp source_options.hpp hw_faults_collect.hpp kernel_log.hpp "
                       "nvml_facts.hpp mounts.hpp ext4_mode.hpp run_storage.hpp p2pdma.hpp",
            "paths": "path_model.hpp node_plan.hpp node_run.hpp network_storage.hpp "
                     "mount_transport.hpp",
            "checks": "checks.hpp",
            "health": "health.hpp",
            "render": "render.hpp",
        },
    },
    "reports": {
        "src": "reports/src",
        "public": "reports/include/gdsb/report",
        "prefix": "gdsb/report/",
        # "" is reports/src itself: the writers, pages, compare and gate; the history above them.
        "floors": ["", "history"],
        "public_folder": {
            "history": "history.hpp history_analysis.hpp history_db.hpp changepoint.hpp "
                       "level_gate.hpp",
        },
    },
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources_under(root, rel):
    for d, _, files in os.walk(os.path.join(root, rel)):
        for f in sorted(files):
            if f.endswith(SOURCE_EXT):
                yield os.path.relpath(os.path.join(d, f), root)


def check_lines(root, breaches):
    for tree in LINE_TREES:
        for rel in sources_under(root, tree):
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                n = sum(1 for _ in f)
            if n > MAX_LINES:
                breaches.append(f"{rel}: {n} lines (at most {MAX_LINES}: "
                                "split it where its sections are)")


def check_library(root, lib, breaches):
    floors = lib["floors"]
    folder_of = {}     # relative path -> folder
    private = {}       # plain header name -> its folder
    for rel in sources_under(root, lib["src"]):
        sub = os.path.relpath(os.path.dirname(rel), lib["src"])
        sub = "" if sub == "." else sub
        if sub not in floors:
            where = f"{lib['src']}/" if sub == "" else f"folder {sub}/"
            rooms = ", ".join(f or "." for f in floors)
            breaches.append(f"{rel}: {where} is not a folder of {lib['src']} ({rooms}); "
                            "move it into one and name it in ci/check_layers.py")
            continue
        folder_of[rel] = sub
        name = os.path.basename(rel)
        if not name.endswith(".cpp"):
            if name in private:
                first = private[name] or "."
                breaches.append(f"{rel}: a second private header named {name} "
                                f"(the first in {first}/)")
            private[name] = sub
    public = {}
    for folder, names in lib["public_folder"].items():
        for name in names.split():
            public[name] = folder
    for rel in sources_under(root, lib["public"]):
        name = os.path.relpath(rel, lib["public"])
        folder_of[rel] = public.get(name, "")
        if lib["floors"][0] != "" and name not in public:
            breaches.append(f"{rel}: a public header without a folder; "
                            "name it in ci/check_layers.py (public_folder)")
            folder_of.pop(rel)
    for rel, folder in sorted(folder_of.items()):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                if target.startswith(lib["prefix"]):
                    unnamed = "" if floors[0] == "" else None  # reports: the root's own
                    to = public.get(target[len(lib["prefix"]):], unnamed)
                elif "/" not in target:
                    to = private.get(target)
                else:
                    continue  # another library's header (gdsb/..., nlohmann/...)
                if to is None:
                    continue  # not this library's (a system header in quotes)
                if floors.index(to) > floors.index(folder):
                    breaches.append(f"{rel}:{no}: includes {target} of {to or '.'}/, above its own "
                                    f"{folder or '.'}/ (includes run downward only)")


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: check_layers.py ROOT (the source tree)", file=sys.stderr)
        return 2
    root = argv[1]
    breaches = []
    check_lines(root, breaches)
    for name in LIBRARIES:
        check_library(root, LIBRARIES[name], breaches)
    for b in breaches:
        print(b)
    if breaches:
        print(f"check_layers: {len(breaches)} breach(es) of docs/ARCHITECTURE.md", file=sys.stderr)
        return 3
    print("check_layers: every include runs downward; no source file over 500 lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
