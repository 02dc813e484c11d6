//===- StorageTest.cpp - The monitor storage strategies -------------------===//
#include "RuntimeTestUtil.h"

using namespace jitlock_test;

namespace {
class StorageTest : public RuntimeTest {};
TEST_F(StorageTest, Placeholder) {}
} // namespace
