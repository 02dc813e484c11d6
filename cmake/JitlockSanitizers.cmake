# -DJITLOCK_SANITIZER=thread|address. "address" also enables UBSan, with every
# UBSan finding fatal so that CTest sees it.
#
# Everything jitlock builds is instrumented, the LLVM-based parts too (the
# passes, the JIT library, jitlock-run and their tests); the libLLVM they
# link is Debian's, which is not. ThreadSanitizer therefore does not see
# LLVM's own memory accesses, nor those of JIT-compiled code, and
# AddressSanitizer checks neither; both still see every access of jitlock's
# code, LLVM's objects included. JitlockPlugin.so then needs the sanitizer's
# runtime and no longer loads into Debian's opt (the lit feature opt-plugin).
if(JITLOCK_SANITIZER STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(JITLOCK_SANITIZER STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  # UBSan's vptr check reads the RTTI of LLVM's classes, which an LLVM built
  # without RTTI does not have (Debian's has it).
  if(JITLOCK_ENABLE_LLVM AND NOT LLVM_ENABLE_RTTI)
    add_compile_options(-fno-sanitize=vptr)
  endif()
elseif(NOT JITLOCK_SANITIZER STREQUAL "")
  message(FATAL_ERROR "JITLOCK_SANITIZER must be 'thread', 'address' or empty")
endif()
