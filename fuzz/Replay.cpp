//===- Replay.cpp - Runs saved fuzz inputs without libFuzzer --------------===//
//
//   jitlock-pass-fuzz-replay [-v] <file or directory>...
//   jitlock-pass-fuzz-replay --print-ir <file>
//
// Runs each input once through the fuzz target's checks, as the libFuzzer
// binary does with -runs=0, but in any build (ThreadSanitizer cannot link
// libFuzzer), and prints what the passes made of the inputs. Exits with 1
// when no input was found; a broken contract aborts, naming the file.
// --print-ir prints an input's module as the passes get it (a generated one
// too), for opt.
//
//===----------------------------------------------------------------------===//
#include "PassFuzzer.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace jitlock::fuzz;
namespace fs = std::filesystem;

int main(int Argc, char **Argv) {
  bool Verbose = false, PrintIR = false;
  std::vector<fs::path> Inputs;
  for (int I = 1; I < Argc; ++I) {
    if (std::strcmp(Argv[I], "-v") == 0) {
      Verbose = true;
      continue;
    }
    if (std::strcmp(Argv[I], "--print-ir") == 0) {
      PrintIR = true;
      continue;
    }
    fs::path P = Argv[I];
    std::error_code EC;
    if (fs::is_directory(P, EC)) {
      for (const fs::directory_entry &E :
           fs::recursive_directory_iterator(P, EC))
        if (E.is_regular_file())
          Inputs.push_back(E.path());
    } else if (fs::is_regular_file(P, EC)) {
      Inputs.push_back(P);
    } else {
      std::fprintf(stderr, "jitlock-pass-fuzz-replay: error: no file '%s'\n",
                   Argv[I]);
      return 1;
    }
  }
  std::sort(Inputs.begin(), Inputs.end());
  if (Inputs.empty()) {
    std::fprintf(stderr, "usage: jitlock-pass-fuzz-replay [-v] <file or "
                         "directory>...\n");
    return 1;
  }

  unsigned Count[3] = {};
  for (const fs::path &P : Inputs) {
    std::ifstream In(P, std::ios::binary);
    std::string Bytes((std::istreambuf_iterator<char>(In)),
                      std::istreambuf_iterator<char>());
    if (PrintIR) {
      llvm::LLVMContext Ctx;
      if (auto M = inputModule(reinterpret_cast<const uint8_t *>(Bytes.data()),
                               Bytes.size(), Ctx))
        M->print(llvm::outs(), nullptr);
      continue;
    }
    // Named first, so that an abort is attributed.
    if (Verbose)
      std::fprintf(stderr, "%s: ", P.c_str());
    std::string Why;
    Outcome O = runInput(reinterpret_cast<const uint8_t *>(Bytes.data()),
                         Bytes.size(), &Why);
    ++Count[unsigned(O)];
    if (Verbose)
      std::fprintf(stderr, "%s%s\n",
                   O == Outcome::Skipped   ? "skipped"
                   : O == Outcome::Refused ? "refused: "
                                           : "lowered",
                   Why.c_str());
  }
  if (PrintIR)
    return 0;
  std::printf("replayed %zu inputs: %u lowered, %u refused with an error, "
              "%u skipped (not valid IR, or not for their pipeline)\n",
              Inputs.size(), Count[unsigned(Outcome::Lowered)],
              Count[unsigned(Outcome::Refused)],
              Count[unsigned(Outcome::Skipped)]);
  return 0;
}
