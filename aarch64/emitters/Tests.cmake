# The host side of the AArch64 emitter tests, included by
# aarch64/CMakeLists.txt: the test binary is built by the cross
# ExternalProject (aarch64/emitters/CMakeLists.txt, through
# aarch64/cross/CMakeLists.txt) and run here under qemu-aarch64 -cpu max.
# Every test carries the labels `aarch64` and `asmjit`.
#
#   aarch64.emitters.runtime.{lse,llsc}    every path against the runtime
#   aarch64.emitters.runtime.header{-8,+24}  the same, header elsewhere
#   aarch64.emitters.synthetic.{lse,llsc}  large/negative offsets, exact
#                                          memory effects
#   aarch64.emitters.threads               threads, mixed assignments/atomics;
#                                          X4's CAS losing a race
#   aarch64.emitters.operands              contract violations refused
#   aarch64.emitters.thread-load           emitLoadThread: every register,
#                                          threads, offsets, contract
#   aarch64.emitters.disassembly.<op>.<atomics>  llvm-mc on the emitted bytes
#
# and, labelled `stackbang` too (A64StackBangTest.cpp):
#
#   aarch64.emitters.stackbang.probe       the check's boundary, arguments,
#                                          registers; Always's addresses
#   aarch64.emitters.stackbang.fastpath    emitted recursion: no slow call
#                                          once the watermark is low enough;
#                                          the watermark goes down
#   aarch64.emitters.stackbang.recovery    overflow inside
#                                          jitlock_rt_call_guarded, 100 times
#   aarch64.emitters.stackbang.backstop    Always: the SIGSEGV backstop
#   aarch64.emitters.stackbang.contract    contract violations refused
#   aarch64.emitters.disassembly.stackbang.{watermark,labels,always}
#
# and, labelled `safepoint` too (A64SafepointTest.cpp, with the scenarios
# of unittests/Emitters/SafepointScenarios.h):
#
#   aarch64.emitters.safepoint.probe     the poll word's armed bit, every
#                                        register around disarmed and armed
#                                        polls, layouts elsewhere
#   aarch64.emitters.safepoint.runtime   a thread stopped at its poll by a
#                                        safepoint and released; a handshake
#                                        run once at the poll
#   aarch64.emitters.safepoint.threads   emitted loops under many
#                                        safepoints and handshakes
#   aarch64.emitters.safepoint.contract  contract violations refused
#   aarch64.emitters.disassembly.safepoint.{outofline,labels}
#
# Uses from aarch64/CMakeLists.txt: qemu, out, triple, a64_emitter_tests,
# jitlock_require_program.

# The cross build needs Debian's arm64 asmjit and GoogleTest (multiarch). Say
# so now rather than fail in the middle of the build.
foreach(lib libasmjit.a libgtest.a)
  if(NOT EXISTS "/usr/lib/${triple}/${lib}")
    message(FATAL_ERROR
      "jitlock: /usr/lib/${triple}/${lib} is missing: the AArch64 emitter "
      "tests need Debian's arm64 asmjit and GoogleTest. Run "
      "scripts/install-deps.sh, or: dpkg --add-architecture arm64 && "
      "apt-get update && apt-get install libasmjit-dev:arm64 "
      "libgtest-dev:arm64; or configure with -DJITLOCK_ENABLE_AARCH64=OFF.")
  endif()
endforeach()
jitlock_require_program(JITLOCK_LLVM_MC llvm-mc llvm-19
  HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)

function(jitlock_a64_emitter_test name filter)
  add_test(NAME aarch64.emitters.${name}
    COMMAND ${qemu} "${a64_emitter_tests}" "--gtest_filter=${filter}"
            --gtest_brief=1 ${ARGN})
  set_tests_properties(aarch64.emitters.${name} PROPERTIES
    LABELS "aarch64;asmjit" TIMEOUT 300
    # -cpu max has LSE: fail rather than skip the LSE tests without it.
    ENVIRONMENT JITLOCK_REQUIRE_LSE=1
    REQUIRED_FILES "${a64_emitter_tests}")
endfunction()

jitlock_a64_emitter_test(runtime.lse "Runtime/*_LSE_*")
jitlock_a64_emitter_test(runtime.llsc "Runtime/*_LLSC_*")
jitlock_a64_emitter_test(synthetic.lse "Synthetic/*_LSE_*")
jitlock_a64_emitter_test(synthetic.llsc "Synthetic/*_LLSC_*")
# The runtime configured with the header elsewhere: the emitted code must
# follow the layout.
jitlock_a64_emitter_test(runtime.header-8 "Runtime/*" --header-offset=-8)
jitlock_a64_emitter_test(runtime.header+24 "Runtime/*" --header-offset=24)
jitlock_a64_emitter_test(threads "Contended.*:SyntheticRace.*")
jitlock_a64_emitter_test(operands "Operands.*")
# emitLoadThread (A64ThreadLoadTest.cpp).
jitlock_a64_emitter_test(thread-load "A64ThreadLoad.*")

foreach(op enter exit)
  foreach(atomics lse llsc)
    set(test aarch64.emitters.disassembly.${op}.${atomics})
    add_test(NAME ${test}
      COMMAND "${CMAKE_COMMAND}" "-DQEMU=${JITLOCK_QEMU_AARCH64}"
              "-DTESTS=${a64_emitter_tests}" "-DLLVM_MC=${JITLOCK_LLVM_MC}"
              -DOP=${op} -DATOMICS=${atomics} "-DOUT_DIR=${out}"
              -P "${CMAKE_CURRENT_LIST_DIR}/CheckDisassembly.cmake")
    set_tests_properties(${test} PROPERTIES
      LABELS "aarch64;asmjit" TIMEOUT 60
      REQUIRED_FILES "${a64_emitter_tests}")
  endforeach()
endforeach()

# Method-entry stack banging.
function(jitlock_a64_stackbang_test name filter)
  jitlock_a64_emitter_test(stackbang.${name} "${filter}")
  set_tests_properties(aarch64.emitters.stackbang.${name} PROPERTIES
    LABELS "aarch64;asmjit;stackbang")
endfunction()
jitlock_a64_stackbang_test(probe "A64StackBangProbe.*")
jitlock_a64_stackbang_test(fastpath
  "*/A64StackBangRecursion.ShallowRecursion*:*/A64StackBangRecursion.TheWatermark*")
jitlock_a64_stackbang_test(recovery "*/A64StackBangRecursion.Overflow*")
jitlock_a64_stackbang_test(backstop "*/A64StackBangRecursion.Always*")
jitlock_a64_stackbang_test(contract "A64StackBangContract.*")
foreach(mode watermark labels always)
  set(test aarch64.emitters.disassembly.stackbang.${mode})
  add_test(NAME ${test}
    COMMAND "${CMAKE_COMMAND}" "-DQEMU=${JITLOCK_QEMU_AARCH64}"
            "-DTESTS=${a64_emitter_tests}" "-DLLVM_MC=${JITLOCK_LLVM_MC}"
            -DMODE=${mode} "-DOUT_DIR=${out}"
            -P "${CMAKE_CURRENT_LIST_DIR}/StackBangDisassembly.cmake")
  set_tests_properties(${test} PROPERTIES
    LABELS "aarch64;asmjit;stackbang" TIMEOUT 60
    REQUIRED_FILES "${a64_emitter_tests}")
endforeach()

# Safepoint polls. The poll has no atomics: one variant, not LSE and LL/SC.
function(jitlock_a64_safepoint_test name filter)
  jitlock_a64_emitter_test(safepoint.${name} "${filter}")
  set_tests_properties(aarch64.emitters.safepoint.${name} PROPERTIES
    LABELS "aarch64;asmjit;safepoint")
endfunction()
jitlock_a64_safepoint_test(probe "A64PollProbe.*")
jitlock_a64_safepoint_test(runtime "A64PollRuntime.*")
jitlock_a64_safepoint_test(threads "A64PollThreads.*")
jitlock_a64_safepoint_test(contract "A64PollContract.*")
foreach(mode outofline labels)
  set(test aarch64.emitters.disassembly.safepoint.${mode})
  add_test(NAME ${test}
    COMMAND "${CMAKE_COMMAND}" "-DQEMU=${JITLOCK_QEMU_AARCH64}"
            "-DTESTS=${a64_emitter_tests}" "-DLLVM_MC=${JITLOCK_LLVM_MC}"
            -DMODE=${mode} "-DOUT_DIR=${out}"
            -P "${CMAKE_CURRENT_LIST_DIR}/PollDisassembly.cmake")
  set_tests_properties(${test} PROPERTIES
    LABELS "aarch64;asmjit;safepoint" TIMEOUT 60
    REQUIRED_FILES "${a64_emitter_tests}")
endforeach()
