/* A C program that embeds cordon through cordon.h only: checks a denied command, runs
 * `echo hi` and checks the JSON result. Usage: consumer_c WORKSPACE */
#include <cordon/cordon.h>
#include <stdio.h>
#include <string.h>

static int fail(const char* what, const char* detail) {
  fprintf(stderr, "consumer_c: %s: %s\n", what, detail);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) return fail("usage", "consumer_c WORKSPACE");
  printf("cordon %s\n", cordon_version());

  char err[512];
  cordon_session* session = cordon_session_new("{}", argv[1], err, sizeof err);
  if (session == NULL) return fail("cordon_session_new", err);

  int allowed = 1;
  char* decision = NULL;
  if (cordon_check(session, "sudo rm -rf /", &allowed, &decision) != CORDON_OK) {
    return fail("cordon_check", cordon_last_error());
  }
  if (allowed != 0 || strstr(decision, "\"verdict\":\"deny\"") == NULL) {
    return fail("sudo was not denied", decision);
  }
  cordon_string_free(decision);

  char* result = NULL;
  if (cordon_run(session, "echo hi", NULL, &result) != CORDON_OK) {
    return fail("cordon_run", cordon_last_error());
  }
  printf("%s\n", result);
  if (strstr(result, "\"status\":\"exited\"") == NULL ||
      strstr(result, "\"exit_code\":0") == NULL || strstr(result, "\"stdout\":\"hi\\n\"") == NULL) {
    return fail("unexpected run result", result);
  }
  cordon_string_free(result);

  /* A bad argument is an error code with a message, not a crash. */
  if (cordon_run(session, NULL, NULL, &result) != CORDON_ERR_INVALID_ARGUMENT) {
    return fail("cordon_run(NULL)", "expected CORDON_ERR_INVALID_ARGUMENT");
  }
  cordon_session_free(session);
  puts("consumer_c: ok");
  return 0;
}
