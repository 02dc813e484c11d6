# -DJITLOCK_SANITIZER=thread|address. "address" also enables UBSan, with every
# UBSan finding fatal so that CTest sees it.
if(JITLOCK_SANITIZER STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(JITLOCK_SANITIZER STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(NOT JITLOCK_SANITIZER STREQUAL "")
  message(FATAL_ERROR "JITLOCK_SANITIZER must be 'thread', 'address' or empty")
endif()
