# LLVM-lowered monitor code on a thread that is not attached, on AArch64,
# included by aarch64/CMakeLists.txt (whose functions and variables it uses):
#
#   lock.ll --opt jitlock-lower<thread=T;locking=L>--> --llc AArch64--> .o
#   .o + libjitlock_aarch64_detached_harness.a + the runtime + GoogleTest
#      --static link--> detached_L_T_A --qemu-aarch64 -cpu max--> PASSED
#
# Tests (label aarch64), one per locking mode, thread mode and atomics, each
# combination of two of them covered:
#
#   aarch64.detached.lightweight.tls.lse     aarch64.detached.heavy.tls.nolse
#   aarch64.detached.lightweight.call.nolse  aarch64.detached.heavy.call.lse
#
# The link puts the runtime where the probe has it (aarch64/harness.cpp), and
# the harness refuses code lowered for another TLS offset or layout.

set(detached_src "${here}/detached/lock.ll")
set(gtest_lib "/usr/lib/${triple}/libgtest.a")
foreach(variant lightweight.tls.lse lightweight.call.nolse heavy.tls.nolse
                heavy.call.lse)
  string(REPLACE "." ";" parts "${variant}")
  list(GET parts 0 locking)
  list(GET parts 1 thread)
  list(GET parts 2 atomics)
  set(lowered "detached.${locking}.${thread}")
  jitlock_aarch64_lower(${lowered} "${detached_src}" ${thread}
    -DEXTRA_PARAMS=locking=${locking})
  jitlock_aarch64_llc(${lowered} ${atomics})
  set(obj "${out}/${lowered}.${atomics}.o")
  set(exe "detached_${locking}_${thread}_${atomics}")
  add_custom_command(OUTPUT "${out}/${exe}"
    COMMAND "${JITLOCK_AARCH64_CXX}" -static -pthread -o "${out}/${exe}"
            "${obj}" -Wl,--whole-archive "${detached_harness_lib}" "${rt_lib}"
            -Wl,--no-whole-archive "${gtest_lib}"
            -Wl,--require-defined=detached_lock
    DEPENDS "${obj}" "${detached_harness_lib}" "${rt_lib}"
            jitlock_aarch64_cross
    COMMENT "Linking AArch64 executable ${exe}"
    VERBATIM)
  list(APPEND all_outputs "${out}/${exe}")
  set(test aarch64.detached.${variant})
  add_test(NAME ${test}
    COMMAND ${qemu} "${out}/${exe}" --locking=${locking} --gtest_brief=1)
  set_tests_properties(${test} PROPERTIES
    LABELS aarch64 TIMEOUT 120 REQUIRED_FILES "${out}/${exe}"
    FAIL_REGULAR_EXPRESSION "harness: refusing to run")
endforeach()
