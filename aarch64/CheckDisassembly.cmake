# Checks that an llc-compiled example object is what its variant claims:
#   ATOMICS=lse    compare-and-swap uses LSE (cas*), no exclusive-pair loops
#   ATOMICS=nolse  ARMv8.0 exclusive loops (ld[a]xr/st[l]xr), no LSE
#   THREAD=tls     the thread comes from tpidr_el0, no jitlock_rt_code_thread call
#   THREAD=call    the thread comes from a jitlock_rt_code_thread call
#
#   cmake -DOBJDUMP=<llvm-objdump> -DOBJECT=<x.o> -DATOMICS=lse|nolse
#         -DTHREAD=tls|call -P CheckDisassembly.cmake
foreach(var OBJDUMP OBJECT ATOMICS THREAD)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "CheckDisassembly.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND "${OBJDUMP}" -d -r --no-show-raw-insn "${OBJECT}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE asm ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OBJDUMP} -d ${OBJECT} failed: ${err}")
endif()
if(NOT asm MATCHES "file format elf64-littleaarch64")
  message(FATAL_ERROR "${OBJECT} is not an AArch64 ELF object")
endif()

set(failed FALSE)
macro(expect what regex should_match)
  if(asm MATCHES "${regex}")
    set(found TRUE)
  else()
    set(found FALSE)
  endif()
  if(NOT found STREQUAL "${should_match}")
    message(SEND_ERROR "${OBJECT}: ${what}: expected '${regex}' "
      "to match: ${should_match}")
    set(failed TRUE)
  else()
    message(STATUS "${what}: ok")
  endif()
endmacro()

set(cas "[ \t]cas(a|l|al)?[ \t]")
set(exclusive "[ \t](ld|st)(a|l)?xr[ \t]")
if(ATOMICS STREQUAL "lse")
  expect("LSE compare-and-swap" "${cas}" TRUE)
  expect("no exclusive loops" "${exclusive}" FALSE)
else()
  expect("exclusive loops" "${exclusive}" TRUE)
  expect("no LSE instructions" "${cas}" FALSE)
endif()
set(current "R_AARCH64_CALL26[ \t]+jitlock_rt_code_thread")
if(THREAD STREQUAL "tls")
  expect("thread pointer read" "mrs[ \t]+x[0-9]+, TPIDR_EL0" TRUE)
  expect("no jitlock_rt_code_thread call" "${current}" FALSE)
else()
  expect("jitlock_rt_code_thread call" "${current}" TRUE)
endif()
expect("slow path calls" "R_AARCH64_CALL26[ \t]+jitlock_rt_monitor_enter" TRUE)
if(failed)
  message(FATAL_ERROR "${OBJECT} is not the ${THREAD}/${ATOMICS} variant")
endif()
