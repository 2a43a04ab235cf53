/* cordon's C API: embed the command policy and the sandbox from C, or from any language with a
 * C FFI (Python ctypes, Node ffi, Go cgo, Ruby fiddle), without C++ and without the CLI.
 *
 *   char err[512];
 *   cordon_session* s = cordon_session_new(NULL, "/path/to/workspace", err, sizeof err);
 *   if (!s) { fprintf(stderr, "cordon: %s\n", err); return 125; }
 *
 *   int allowed = 0;
 *   cordon_check(s, "sudo rm -rf /", &allowed, NULL);          // allowed == 0: denied
 *
 *   char* result = NULL;                                       // JSON, see docs/library.md
 *   if (cordon_run(s, "make -j2 && make test", NULL, &result) == CORDON_OK) {
 *     puts(result);                     // {"status":"exited","exit_code":0,"stdout":...}
 *     cordon_string_free(result);
 *   } else {
 *     fprintf(stderr, "cordon: %s\n", cordon_last_error());
 *   }
 *   cordon_session_free(s);
 *
 * Results: rich values (a run result, a policy decision, the capabilities payload) come back as
 * UTF-8 JSON text with the same fields as `cordon run/check/status --json` (docs/cli.md,
 * docs/capabilities.md). A denied command, a timeout or a sandbox that could not be built is a
 * *result* (CORDON_OK with "status": "denied" / "timed_out" / "setup_failed"), never an error
 * code: error codes mean the call itself was malformed or cordon failed internally.
 *
 * Ownership: a cordon_session is owned by the caller and released with cordon_session_free.
 * Every char* that cordon hands out through an out-parameter is allocated by cordon and released
 * with cordon_string_free (never with free(): the library may use another allocator). Strings
 * passed in are borrowed for the duration of the call only. Error messages for
 * cordon_session_new are copied into the caller's buffer (always NUL-terminated, truncated if
 * needed).
 *
 * Threading: a session is immutable once created. cordon_check, cordon_run* and
 * cordon_capabilities_json may be called on the same session from several threads at once (each
 * run supervises its own command). cordon_session_free must not race with any other call on
 * that session. cordon_last_error() is per thread.
 *
 * Irreversible: cordon_run executes the command. What it writes inside the workspace (and the
 * other writable roots of the configuration) stays written; the sandbox confines where, not
 * whether.
 *
 * No C++ exception ever crosses this API; failures inside the library become error codes.
 */
#ifndef CORDON_CORDON_H_
#define CORDON_CORDON_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CORDON_API __attribute__((visibility("default")))
#else
#define CORDON_API
#endif

/* Bumped on incompatible changes to this header. */
#define CORDON_C_API_VERSION 1

/* Return codes. The values match cordon::ErrorCode + 1 and never change. */
typedef enum cordon_status {
  CORDON_OK = 0,
  CORDON_ERR_INVALID_ARGUMENT = 1, /* NULL where a value is required, malformed request */
  CORDON_ERR_CONFIG = 2,           /* the configuration is invalid */
  CORDON_ERR_NOT_FOUND = 3,        /* a named path (workspace, cwd) does not exist */
  CORDON_ERR_UNAVAILABLE = 4,      /* a guarantee was asked for that this machine cannot give */
  CORDON_ERR_SYSTEM = 5,           /* a system call failed */
  CORDON_ERR_INTERNAL = 6,         /* a bug in cordon (including an unexpected exception) */
  CORDON_ERR_NO_MEMORY = 7         /* allocation failed */
} cordon_status;

typedef struct cordon_session cordon_session;

/* Streams for cordon_output_fn. */
#define CORDON_STDOUT 1
#define CORDON_STDERR 2

/* Called on the thread inside cordon_run as the command writes output; `data` is not
 * NUL-terminated and is valid only during the call. Must return quickly: the command's pipe
 * fills while the callback blocks. The full (possibly truncated) output is also in the result. */
typedef void (*cordon_output_fn)(void* user_data, int stream, const char* data, size_t len);

/* Per-run options. A zero-initialised struct means "the session's defaults". */
typedef struct cordon_run_options {
  int64_t timeout_ms;         /* > 0: overrides the configured timeout for this run */
  const char* cwd;            /* NULL: the workspace; otherwise a directory inside it */
  int cancel_fd;              /* > 0: when readable (e.g. an eventfd), the run is killed. <= 0:
                                 not cancellable (fd 0 is stdin and never a cancel descriptor) */
  cordon_output_fn on_output; /* NULL: output is only collected into the result */
  void* user_data;            /* passed to on_output */
} cordon_run_options;

/* The library version, e.g. "0.1.0". Static storage; never free it. */
CORDON_API const char* cordon_version(void);

/* A fixed English name for a cordon_status ("ok", "config", ...). Static storage. */
CORDON_API const char* cordon_status_name(int status);

/* The message of the last failed call on this thread ("" if none). Valid until the next cordon
 * call on this thread. */
CORDON_API const char* cordon_last_error(void);

/* Creates a session pinned to one configuration and workspace.
 *   config_json: NULL loads the user's config file like the CLI does
 *                ($XDG_CONFIG_HOME/cordon/config.json or ~/.config/cordon/config.json; the
 *                documented defaults when it does not exist). Otherwise JSON text in the config
 *                file format (docs/config.md); "{}" means the defaults.
 *   workspace:   the directory commands run in and may write to; NULL: the current directory.
 *   err/err_len: optional buffer for the error message.
 * Returns NULL on failure (the message is in err and in cordon_last_error()). Reads $HOME and
 * $XDG_CONFIG_HOME of the process to locate the config file and expand "~". */
CORDON_API cordon_session* cordon_session_new(const char* config_json, const char* workspace,
                                              char* err, size_t err_len);

/* Releases a session; NULL is ignored. Must not race with other calls on the session. */
CORDON_API void cordon_session_free(cordon_session* session);

/* Evaluates the command policy on `command` without running anything.
 *   allowed_out:       optional; set to 1 when the policy allows the command, 0 when it denies.
 *   decision_json_out: optional; set to the Decision as JSON ({"verdict":"deny","rule_id":...}),
 *                      free with cordon_string_free. */
CORDON_API int cordon_check(const cordon_session* session, const char* command, int* allowed_out,
                            char** decision_json_out);

/* Runs `shell_text` as `/bin/sh -c shell_text` in the sandbox after the policy check, and waits
 * for it. `options` may be NULL. On CORDON_OK *result_json_out is the RunResult as JSON (free
 * with cordon_string_free); its "exit_code" is the code the CLI would exit with (124 timeout,
 * 125 setup failed, 126 denied, 128+N signal, else the command's own code). */
CORDON_API int cordon_run(const cordon_session* session, const char* shell_text,
                          const cordon_run_options* options, char** result_json_out);

/* The same with an argument vector (NULL-terminated, argv[0] non-NULL) run without a shell. */
CORDON_API int cordon_run_argv(const cordon_session* session, const char* const* argv,
                               const cordon_run_options* options, char** result_json_out);

/* What this session enforces on this machine (`cordon status --json`, docs/capabilities.md). */
CORDON_API int cordon_capabilities_json(const cordon_session* session, char** json_out);

/* Releases a string returned by cordon; NULL is ignored. */
CORDON_API void cordon_string_free(char* text);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CORDON_CORDON_H_ */
