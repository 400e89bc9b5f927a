/* tests/msvc: the few C library declarations the core uses, so that clang can
 * check the core's MSVC dialect without a Windows SDK (test_compiler_dialects.py). */
#define assert(x) ((void)0)
#define static_assert _Static_assert
