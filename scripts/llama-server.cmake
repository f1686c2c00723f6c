# Included by llama.cpp's own CMakeLists (CMAKE_PROJECT_llama.cpp_INCLUDE)
# when scripts/setup.sh builds llama-cpp-python for the test server.
# llama-cpp-python forces llama.cpp's `common` library on, but loads only
# libllama and ggml through ctypes; `common` (chat parsers, Jinja, argument
# handling) is more than half of the compile, so it is switched off here.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama-cpp-python loads libllama alone" FORCE)
