/* A C program that embeds cordon through cordon.h only: checks a denied command, runs
 * `echo hi` and checks the JSON result. Usage: consumer_c WORKSPACE */
#include <cordon/cordon.h>
#include <stdio.h>
#include <string.h>

/* Collects streamed stdout for the on_output test. */
struct captured {
  char text[64];
  size_t len;
};

static void on_output(void* user_data, int stream, const char* data, size_t len) {
  struct captured* out = (struct captured*)user_data;
  if (stream != CORDON_STDOUT) return;
  while (len > 0 && out->len + 1 < sizeof out->text) {
    out->text[out->len++] = *data++;
    --len;
  }
  out->text[out->len] = '\0';
}

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

  /* argv form with streamed output. */
  struct captured streamed = {{0}, 0};
  cordon_run_options options = {0};
  options.on_output = on_output;
  options.user_data = &streamed;
  const char* const argv_echo[] = {"echo", "streamed", NULL};
  if (cordon_run_argv(session, argv_echo, &options, &result) != CORDON_OK) {
    return fail("cordon_run_argv", cordon_last_error());
  }
  cordon_string_free(result);
  if (strcmp(streamed.text, "streamed\n") != 0) return fail("on_output got", streamed.text);

  /* A timeout is a result ("timed_out", exit code 124), not an error. */
  cordon_run_options quick = {0};
  quick.timeout_ms = 200;
  if (cordon_run(session, "sleep 10", &quick, &result) != CORDON_OK) {
    return fail("cordon_run(sleep)", cordon_last_error());
  }
  if (strstr(result, "\"status\":\"timed_out\"") == NULL ||
      strstr(result, "\"exit_code\":124") == NULL) {
    return fail("sleep 10 did not time out", result);
  }
  cordon_string_free(result);

  char* capabilities = NULL;
  if (cordon_capabilities_json(session, &capabilities) != CORDON_OK ||
      strstr(capabilities, "\"can_run\":true") == NULL) {
    return fail("capabilities", capabilities ? capabilities : cordon_last_error());
  }
  cordon_string_free(capabilities);

  /* A bad argument is an error code with a message, not a crash. */
  if (cordon_run(session, NULL, NULL, &result) != CORDON_ERR_INVALID_ARGUMENT) {
    return fail("cordon_run(NULL)", "expected CORDON_ERR_INVALID_ARGUMENT");
  }
  cordon_session_free(session);

  /* A bad configuration is a NULL session with a message naming the problem. */
  if (cordon_session_new("{\"sandbox\": 5}", argv[1], err, sizeof err) != NULL || err[0] == '\0') {
    return fail("invalid config", "was accepted");
  }
  printf("invalid config refused: %s\n", err);
  puts("consumer_c: ok");
  return 0;
}
