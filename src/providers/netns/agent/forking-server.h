// The accept loop of the lab's TCP servers: a process per connection, so several clients are served at once
// with plain blocking reads and writes; each ends with its server (SIGTERM at teardown) and is reaped by the
// kernel. `ready` is printed once the socket listens: the harness waits for that line, never a sleep.
#ifndef FORKING_SERVER_H
#define FORKING_SERVER_H
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

typedef void (*connection_handler)(int fd, void *context);

static _Noreturn void serve_forked(int listening, const char *ready, connection_handler handle, void *context) {
  signal(SIGCHLD, SIG_IGN);
  pid_t server = getpid();
  printf("%s\n", ready);
  fflush(stdout);
  for (;;) {
    int c = accept4(listening, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) continue;
    if (fork() == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != server) _exit(0);
      close(listening);
      handle(c, context);
      _exit(0);
    }
    close(c);
  }
}
#endif
