/* One 32-bit system call from a 64-bit program: getpid (20) via int $0x80. */
#include <stdio.h>

int main(void) {
    long ret;
    printf("before\n");
    fflush(stdout);
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
    printf("after ret=%ld\n", ret);
    return 0;
}
