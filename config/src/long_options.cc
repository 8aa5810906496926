// long_options.cc: see long_options.h.
#include "logsink/config/long_options.h"

#include <cstring>

namespace logsink::config {

bool LongOptionInFull(char *const argv[], int optind, const char *optarg, const struct option *opts,
                      int index, std::string *error) {
  if (index < 0 || optind < 1) return true;  // a short option
  // The option's own word is the one before optind, or the one before that
  // when its value was the next word ("--file PATH").
  int at = optind - 1;
  if (optarg && at >= 1 && optarg == argv[at]) at--;
  const char *word = argv[at];
  const char *name = opts[index].name;
  const size_t n = std::strlen(name);
  if (std::strncmp(word, "--", 2) == 0 && std::strncmp(word + 2, name, n) == 0 &&
      (word[2 + n] == '\0' || word[2 + n] == '='))
    return true;
  std::string spelt(word);
  if (size_t eq = spelt.find('='); eq != std::string::npos) spelt.resize(eq);
  *error = "unknown option '" + spelt + "' (options are not abbreviated: --" + name + "?)";
  return false;
}

}  // namespace logsink::config
