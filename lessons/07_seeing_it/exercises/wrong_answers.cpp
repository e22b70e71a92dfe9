// lessons/07_seeing_it/exercises/wrong_answers.cpp — the deliberately wrong answers of
// wrong_answers.h: each hands exercise 3's address formula to the library, and
// exercises_test.cpp asserts the symbol check rejects it.
#include "wrong_answers.h"

namespace glass::lesson07::wrong {

int64_t storage_address_by_lab(const viz::app::StrideLab& lab, const std::vector<int64_t>& index) {
  return lab.storage_index(index);
}

int64_t storage_address_by_library(const viz::app::StrideLab& lab,
                                   const std::vector<int64_t>& index) {
  return glass::storage_index(lab.view(), index);
}

}  // namespace glass::lesson07::wrong
