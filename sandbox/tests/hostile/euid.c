/* Installed setuid root by the test: prints the identity it runs with, then
 * tries to become root for real. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    printf("ruid=%d euid=%d\n", (int)getuid(), (int)geteuid());
    if (setuid(0) == 0) {
        printf("setuid0=OK\n");
    } else {
        printf("setuid0=%s\n", errno == EPERM ? "EPERM" : strerror(errno));
    }
    return 0;
}
