# -*- Python -*-
# The lit configuration of the jitlock pass tests. Loaded by the configured
# lit.site.cfg.py in the build tree, which sets llvm_tools_dir,
# jitlock_shlibdir and the source and object roots.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "jitlock"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".ll"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

# FileCheck, `| not`, `| count` and %python.
llvm_config.use_default_substitutions()

# The plugin: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so
config.substitutions.append(("%shlibdir", config.jitlock_shlibdir))

# Always the tools of the LLVM the plugin was built against (a plugin built
# for LLVM 19 cannot be loaded by another opt), never whatever is on PATH.
llvm_config.add_tool_substitutions(
    ["opt", "llc", "not", "split-file"], [config.llvm_tools_dir]
)

# Tests that run llc for one target say REQUIRES: x86-registered-target or
# aarch64-registered-target.
for arch in config.targets_to_build.split():
    config.available_features.add(arch.lower() + "-registered-target")

# The tools of this build for test/tools/ (jitlock-run, jitlock-bench in RUN
# lines), never whatever is on PATH.
llvm_config.add_tool_substitutions(
    ["jitlock-run", "jitlock-bench"],
    [os.path.join(config.jitlock_obj_root, "tools", t)
     for t in ("jitlock-run", "jitlock-bench")],
)
