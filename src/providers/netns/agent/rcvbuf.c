// rcvbuf PID FD BYTES: sets the receive buffer of another process's socket (SO_RCVBUFFORCE on a copy of
// its descriptor, taken with pidfd_getfd), beyond net.core.rmem_max, which a network namespace cannot
// raise. The probe trace's monitors read one event at a time, and a burst of traced packets fills their
// default 208 KB: the kernel then ends their socket with ENOBUFS and every later event is lost.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: rcvbuf PID FD BYTES\n");
    return 2;
  }
  int pidfd = (int)syscall(SYS_pidfd_open, atoi(argv[1]), 0);
  if (pidfd < 0) {
    perror("rcvbuf: pidfd_open");
    return 1;
  }
  int sock = (int)syscall(SYS_pidfd_getfd, pidfd, atoi(argv[2]), 0);
  if (sock < 0) {
    perror("rcvbuf: pidfd_getfd");
    return 1;
  }
  int bytes = atoi(argv[3]);
  if (setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) < 0) {
    perror("rcvbuf: setsockopt SO_RCVBUFFORCE");
    return 1;
  }
  return 0;
}
