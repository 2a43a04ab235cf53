#include "cli/subcommands.h"

int main(int argc, char** argv) { return cordon::cli::Main(argc, argv); }
