// lessons/07_seeing_it/exercises/wrong_answers.h — deliberately wrong answers to lesson 07's
// exercises, which exercises_test.cpp checks its graders reject.
//
// Each function here gives the right addresses by calling what exercise 3 bans (named
// beside it), and a test asserts the symbol check says so. They are compiled into an object
// file of their own (wrong_answers.cpp).
#pragma once

#include "exercises.h"

namespace glass::lesson07::wrong {

// Exercise 3.
int64_t storage_address_by_lab(const viz::app::StrideLab& lab,
                               const std::vector<int64_t>& index);  // lab.storage_index
int64_t storage_address_by_library(const viz::app::StrideLab& lab,
                                   const std::vector<int64_t>& index);  // glass::storage_index

}  // namespace glass::lesson07::wrong
