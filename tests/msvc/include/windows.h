/* tests/msvc: see assert.h. What probe.c calls, declared as the Windows SDK
 * declares them (profileapi.h, processthreadsapi.h, minwinbase.h). */
typedef int BOOL;
typedef void *HANDLE;
typedef unsigned long DWORD;
typedef union _LARGE_INTEGER {
    struct {
        DWORD LowPart;
        long HighPart;
    };
    long long QuadPart;
} LARGE_INTEGER;
typedef struct _FILETIME {
    DWORD dwLowDateTime;
    DWORD dwHighDateTime;
} FILETIME, *LPFILETIME;
#define WINAPI __stdcall
__declspec(dllimport) BOOL WINAPI QueryPerformanceCounter(LARGE_INTEGER *);
__declspec(dllimport) BOOL WINAPI QueryPerformanceFrequency(LARGE_INTEGER *);
__declspec(dllimport) HANDLE WINAPI GetCurrentThread(void);
__declspec(dllimport) BOOL WINAPI GetThreadTimes(HANDLE, LPFILETIME, LPFILETIME, LPFILETIME,
                                                 LPFILETIME);
