// A C++ program that embeds cordon through the public C++ API (cordon/session.h): checks a
// denied command and runs `echo hi`. Usage: consumer_cpp WORKSPACE
#include <cordon/session.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  auto session = cordon::Session::Create(cordon::Config{}, argv[1]);
  if (!session) {
    std::fprintf(stderr, "consumer_cpp: %s\n", session.error().message.c_str());
    return 1;
  }
  if (session->Check("sudo rm -rf /").allowed()) {
    std::fprintf(stderr, "consumer_cpp: sudo was not denied\n");
    return 1;
  }
  cordon::CommandRequest request;
  request.shell_text = "echo hi";
  const cordon::RunResult result = session->Run(request);
  if (result.status != cordon::RunStatus::kExited || result.exit_code != 0 ||
      result.stdout_data.data != "hi\n") {
    std::fprintf(stderr, "consumer_cpp: status %s, error '%s', stdout '%s'\n",
                 cordon::RunStatusName(result.status), result.error.c_str(),
                 result.stdout_data.data.c_str());
    return 1;
  }
  std::puts("consumer_cpp: ok");
  return 0;
}
