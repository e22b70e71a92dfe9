// lessons/common/answer_symbols.h — what a compiled answer calls, read from its object file,
// for the exercise tests that ban a library function (lessons 01 to 07, 10 and 11).
//
// An exercise that asks for a ring all-reduce cannot tell, from the values alone, a ring
// written by the student from a call to the library's: both give the sum. The object file
// can: a call to a function defined elsewhere is an undefined symbol there (`nm -u`), and,
// when the file is compiled with -ffunction-sections, the relocations of one function's
// section (`objdump -r`) say what that function — with its helpers and lambdas, followed
// through the object's other sections — calls. The lessons' CMakeLists.txt builds the
// answers as object libraries for this and passes the tools' paths as GLASS_NM and
// GLASS_OBJDUMP.
//
// Invariant: every reader throws, naming the command, when its tool cannot run, fails or
// reads nothing — a check that read nothing would find no banned call and pass every answer.
#pragma once

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace glass::lessons {

// What `command` writes to stdout. Throws, naming the command, when it cannot run or fails:
// a check that read nothing would find no banned call and pass every answer.
inline std::string output_of(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run `" + command + "`");
  std::string out;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  const int status = pclose(pipe);
  if (status != 0)
    throw std::runtime_error("`" + command + "` failed (status " + std::to_string(status) +
                             "); its output: " + out);
  return out;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::string demangle(const std::string& mangled) {
  int status = 0;
  char* plain = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && plain != nullptr ? plain : mangled;
  std::free(plain);
  return out;
}

// The functions `object` calls but does not define, demangled (nm -C -u), one per entry.
inline std::vector<std::string> undefined_symbols(const std::string& object) {
  std::vector<std::string> symbols;
  for (const std::string& line :
       lines_of(output_of(std::string(GLASS_NM) + " -C -u '" + object + "'"))) {
    const size_t u = line.find("U ");
    if (u != std::string::npos) symbols.push_back(line.substr(u + 2));
  }
  if (symbols.empty()) throw std::runtime_error("nm lists no undefined symbol in " + object);
  return symbols;
}

// The undefined symbols (demangled) that the functions whose demangled name starts with
// `function` can reach inside `object`. The object is compiled with -ffunction-sections,
// so each function is a section of its own; a section's relocations (objdump -r) name what
// it refers to — other sections of the object (helpers, lambdas, std::function's invokers:
// followed) and undefined symbols (the calls out: collected). So a banned call cannot hide
// in a helper or a lambda, and one exercise's legitimate collective (lesson 10's exercise 2's
// allreduce) is not charged to another that bans it (its exercise 1) in the same file.
inline std::set<std::string> calls_reachable_from(const std::string& object,
                                                  const std::string& function) {
  // objdump -t: "VALUE FLAGS SECTION\tSIZE NAME"; undefined symbols are in *UND*.
  std::map<std::string, std::string> section_of;
  std::set<std::string> undefined, start;
  for (const std::string& line :
       lines_of(output_of(std::string(GLASS_OBJDUMP) + " -t '" + object + "'"))) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || tab < 25) continue;
    const size_t space = line.rfind(' ', tab);
    const std::string section = line.substr(space + 1, tab - space - 1);
    const std::string name = line.substr(line.rfind(' ') + 1);
    if (section == "*UND*") {
      undefined.insert(name);
    } else {
      section_of[name] = section;
      if (demangle(name).starts_with(function)) start.insert(section);
    }
  }
  if (start.empty())
    throw std::runtime_error("objdump -t finds no function " + function + " in " + object);
  if (start.contains(".text"))
    throw std::runtime_error(function + " is in .text with every other function of " + object +
                             ": it must be compiled with -ffunction-sections");
  // objdump -r: "RELOCATION RECORDS FOR [SECTION]:", then "OFFSET TYPE TARGET[+-ADDEND]".
  std::map<std::string, std::set<std::string>> refers_to;
  std::string current;
  for (const std::string& line :
       lines_of(output_of(std::string(GLASS_OBJDUMP) + " -r '" + object + "'"))) {
    if (line.starts_with("RELOCATION RECORDS FOR [")) {
      current = line.substr(24, line.find(']') - 24);
      continue;
    }
    std::istringstream fields(line);
    std::string offset, type, target;
    if (current.empty() || !(fields >> offset >> type >> target) || offset == "OFFSET") continue;
    refers_to[current].insert(target.substr(0, target.find_first_of("+-")));
  }
  std::set<std::string> seen(start.begin(), start.end()), calls;
  std::vector<std::string> todo(start.begin(), start.end());
  while (!todo.empty()) {
    const std::string section = todo.back();
    todo.pop_back();
    for (const std::string& target : refers_to[section]) {
      if (undefined.contains(target)) {
        calls.insert(demangle(target));
        continue;
      }
      const auto defined = section_of.find(target);
      const std::string next = defined != section_of.end() ? defined->second : target;
      if (seen.insert(next).second) todo.push_back(next);
    }
  }
  return calls;
}

struct Ban {
  std::string prefix;  // of the demangled symbol
  std::string why;
};

inline std::string banned_among(const std::vector<std::string>& symbols,
                                const std::vector<Ban>& bans) {
  std::string found;
  for (const Ban& ban : bans)
    for (const std::string& symbol : symbols)
      if (symbol.starts_with(ban.prefix)) {
        found += ban.why + " (it calls " + ban.prefix + "...). ";
        break;
      }
  return found;
}

// "" or, for each call `function` in `object` reaches (calls_reachable_from) that starts with
// one of `banned` (demangled prefixes such as "glass::Tensor::contiguous("), the sentence
// "exercise N must not call <that function>. ". What an allowed op calls inside the library
// is not seen, only what the answer's own code (with its helpers and lambdas, and the inline
// functions and templates of the headers, which are compiled into the answer) calls: the
// per-function equivalent of counting only the ops the student's code dispatches itself.
inline std::string exercise_calls_banned(const std::string& object, int exercise,
                                         const std::string& function,
                                         const std::vector<std::string>& banned) {
  std::string found;
  for (const std::string& call : calls_reachable_from(object, function))
    for (const std::string& prefix : banned)
      if (call.starts_with(prefix)) {
        found += "exercise " + std::to_string(exercise) + " must not call " + call + ". ";
        break;
      }
  return found;
}

}  // namespace glass::lessons
