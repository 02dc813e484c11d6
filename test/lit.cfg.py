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
# A sanitizer build's plugin needs the sanitizer's runtime, which Debian's
# opt does not have: tests that load it into opt REQUIRE opt-plugin.
if not config.jitlock_sanitizer:
    config.available_features.add("opt-plugin")

# Always the tools of the LLVM the plugin was built against (a plugin built
# for LLVM 19 cannot be loaded by another opt), never whatever is on PATH.
llvm_config.add_tool_substitutions(
    ["opt", "llc", "not", "split-file", "llvm-readobj", "llvm-link"],
    [config.llvm_tools_dir],
)

# Tests that run llc for one target say REQUIRES: x86-registered-target or
# aarch64-registered-target.
for arch in config.targets_to_build.split():
    config.available_features.add(arch.lower() + "-registered-target")

# A plugin built without NDEBUG: its asserts and LLVM_DEBUG output, which
# -jitlock-debug-only=<DEBUG_TYPE> turns on.
if config.jitlock_asserts:
    config.available_features.add("jitlock-asserts")

# The tools of this build (jitlock-run, jitlock-bench, jitlock-baseline in
# RUN lines), never whatever is on PATH. A build without the JIT has none:
# a test that runs one requires the feature of its name.
config.available_features.update(config.jitlock_tools)
jitlock_tools = ("jitlock-run", "jitlock-bench", "jitlock-baseline", "jitlock-java")
llvm_config.add_tool_substitutions(
    list(jitlock_tools),
    [os.path.join(config.jitlock_obj_root, "tools", t) for t in jitlock_tools],
)

# AArch64 execution (JITLOCK_ENABLE_AARCH64): the feature aarch64-exec, qemu
# with every extension it emulates (LSE among them), and the static link of
# an llc-compiled module with one of the cross-built harnesses
# (cmake/aarch64-cross): %a64-link -o exe module.o %a64-<harness>.
llvm_config.add_tool_substitutions(
    ["llvm-objdump", "llvm-mc"], [config.llvm_tools_dir]
)
if config.jitlock_aarch64_dir:
    config.available_features.add("aarch64-exec")

    def a64_harness(name, *extra):
        # All of the harness and of the runtime, whatever the module uses.
        libs = [
            os.path.join(config.jitlock_aarch64_dir, f"libjitlock_{lib}.a")
            for lib in (name, "rt_aarch64")
        ]
        return " ".join(
            ["-Wl,--whole-archive", *libs, "-Wl,--no-whole-archive", *extra]
        )

    # The example harness refers to the example weakly (the probe has none);
    # the stack-bang harness counts the module's slow calls through a wrap.
    example_symbols = ["jitlock_example_run", "jitlock_example_check",
                       "jitlock_lowered_layout"]
    config.substitutions += [
        ("%qemu-aarch64", f"{config.jitlock_qemu_aarch64} -cpu max"),
        ("%a64-link", f"{config.jitlock_aarch64_cxx} -static -pthread"),
        ("%a64-harness", a64_harness(
            "aarch64_harness",
            *["-Wl,--require-defined=" + sym for sym in example_symbols])),
        ("%a64-stackbang-harness", a64_harness(
            "aarch64_stackbang_harness", "-Wl,--wrap=jitlock_rt_stack_bang")),
        ("%a64-safepoint-harness", a64_harness("aarch64_safepoint_harness")),
        # The deopt harness reads .llvm_stackmaps between two symbols.
        ("%a64-deopt-harness", a64_harness(
            "aarch64_deopt_harness", "-Wl,-T," + os.path.join(
                config.jitlock_src_root, "test", "AArch64", "Harness",
                "stackmaps.ld"))),
        ("%a64-detached-harness", a64_harness(
            "aarch64_detached_harness", config.jitlock_aarch64_gtest)),
        ("%a64-emitter-tests",
         os.path.join(config.jitlock_aarch64_dir, "jitlock-a64-emitter-tests")),
    ]
