//===- StackMaps.cpp - Stack map records by return address ----------------===//
//
// Sections are read with llvm::StackMapParser. Its constructor walks every
// record without bounds checks, so a section is first checked to hold every
// count and record it claims (checkBounds); after that, only the parser reads
// it.
//
// A deopt record comes from a statepoint (llvm.experimental.deoptimize is
// lowered to one). Its locations are: the calling convention, the flags and
// the number of deopt operands (three constants), then the deopt operands,
// then the GC pointers. The monitor group is the end of the deopt operands.
//
//===----------------------------------------------------------------------===//
#include "jitlock/Deopt.h"

#include "llvm/Object/StackMapParser.h"

#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

using namespace jitlock::deopt;

namespace {

using Parser = llvm::StackMapParser<llvm::endianness::little>;
using Location = Parser::LocationAccessor;
using Kind = Parser::LocationKind;

/// The statepoint header: calling convention, flags, deopt operand count.
constexpr unsigned StatepointHeaderLocations = 3;

uint64_t readLE(const uint8_t *P, unsigned Size) {
  uint64_t V = 0;
  for (unsigned I = 0; I != Size; ++I)
    V |= uint64_t(P[I]) << (8 * I);
  return V;
}

/// Whether every function, constant and record the header counts fits in
/// `B`, so that the parser, which trusts the counts, stays inside it. The
/// sizes are the version 3 format's (docs/deopt.md).
bool checkBounds(llvm::ArrayRef<uint8_t> B, std::string &Error) {
  if (B.size() < 16 || B[0] != 3) {
    Error = "not a version 3 stack map section";
    return false;
  }
  uint64_t NumFunctions = readLE(&B[4], 4), NumConstants = readLE(&B[8], 4),
           NumRecords = readLE(&B[12], 4);
  uint64_t Offset = 16 + NumFunctions * 24 + NumConstants * 8;
  for (uint64_t I = 0; I != NumRecords; ++I) {
    // ID, instruction offset, reserved, location count; locations of 12
    // bytes; padding to 8; padding, live-out count; live-outs of 4 bytes;
    // padding to 8.
    if (Offset + 16 > B.size()) {
      Offset = B.size() + 1;
      break;
    }
    uint64_t Live =
        ((Offset + 16 + 12 * readLE(&B[Offset + 14], 2) + 7) & ~uint64_t(7)) +
        2;
    if (Live + 2 > B.size()) {
      Offset = Live + 2;
      break;
    }
    Offset = (Live + 2 + 4 * readLE(&B[Live], 2) + 7) & ~uint64_t(7);
  }
  if (Offset > B.size()) {
    Error = "stack map section truncated: its counts need more than its " +
            std::to_string(B.size()) + " bytes";
    return false;
  }
  return true;
}

struct Section {
  std::vector<uint8_t> Bytes;
  std::unique_ptr<Parser> P;
  uint64_t Owner;
};

/// Where one record is.
struct RecordRef {
  const Section *S;
  unsigned Index;
  uint64_t FunctionAddress;
  uint64_t StackSize;
};

} // namespace

struct StackMapTable::Impl {
  mutable std::shared_mutex Lock;
  std::map<const Section *, std::unique_ptr<Section>> Sections;
  std::unordered_map<uint64_t, RecordRef> ByReturnAddress;
};

StackMapTable::StackMapTable() : P(std::make_unique<Impl>()) {}
StackMapTable::~StackMapTable() = default;

StackMapTable &StackMapTable::global() {
  static StackMapTable Table;
  return Table;
}

bool StackMapTable::addSection(llvm::ArrayRef<uint8_t> Bytes, uint64_t Owner,
                               std::string &Error) {
  if (!checkBounds(Bytes, Error))
    return false;
  auto S = std::make_unique<Section>();
  S->Bytes.assign(Bytes.begin(), Bytes.end());
  S->P = std::make_unique<Parser>(S->Bytes);
  S->Owner = Owner;

  // Records follow their functions' order; each function says how many.
  std::vector<std::pair<uint64_t, RecordRef>> Found;
  unsigned Index = 0;
  const Parser &SP = *S->P;
  for (const auto &F : SP.functions()) {
    for (uint64_t I = 0; I != F.getRecordCount(); ++I, ++Index) {
      if (Index >= SP.getNumRecords()) {
        Error = "stack map functions count more records than the section has";
        return false;
      }
      uint64_t Return =
          F.getFunctionAddress() + SP.getRecord(Index).getInstructionOffset();
      Found.push_back(
          {Return, {S.get(), Index, F.getFunctionAddress(), F.getStackSize()}});
    }
  }
  std::unique_lock<std::shared_mutex> G(P->Lock);
  for (const auto &[Return, Ref] : Found) {
    if (P->ByReturnAddress.count(Return)) {
      Error = "a stack map record for return address " +
              std::to_string(Return) + " is registered already";
      return false;
    }
  }
  for (const auto &[Return, Ref] : Found)
    P->ByReturnAddress.emplace(Return, Ref);
  const Section *Key = S.get();
  P->Sections.emplace(Key, std::move(S));
  return true;
}

void StackMapTable::removeSections(uint64_t Owner) {
  std::unique_lock<std::shared_mutex> G(P->Lock);
  for (auto It = P->ByReturnAddress.begin(); It != P->ByReturnAddress.end();)
    It = It->second.S->Owner == Owner ? P->ByReturnAddress.erase(It)
                                      : std::next(It);
  for (auto It = P->Sections.begin(); It != P->Sections.end();)
    It = It->second->Owner == Owner ? P->Sections.erase(It) : std::next(It);
}

void StackMapTable::transferSections(uint64_t From, uint64_t To) {
  std::unique_lock<std::shared_mutex> G(P->Lock);
  for (auto &[Key, S] : P->Sections)
    if (S->Owner == From)
      S->Owner = To;
}

size_t StackMapTable::numRecords() const {
  std::shared_lock<std::shared_mutex> G(P->Lock);
  return P->ByReturnAddress.size();
}

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

bool jitlock::deopt::isPreserved(Arch A, unsigned Reg) {
  switch (A) {
  case Arch::X86_64:
    // rbx 3, rbp 6, rsp 7, r12-r15 12-15.
    return Reg == 3 || Reg == 6 || Reg == 7 || (Reg >= 12 && Reg <= 15);
  case Arch::AArch64:
    // x19-x28, x29 (the frame pointer), sp 31.
    return (Reg >= 19 && Reg <= 29) || Reg == 31;
  }
  return false;
}

namespace {

/// The registers the entry stub saves, as a mask of DWARF numbers.
uint32_t preservedRegisters(Arch A) {
  uint32_t Mask = 0;
  for (unsigned Reg = 0; Reg != 32; ++Reg)
    if (isPreserved(A, Reg))
      Mask |= uint32_t(1) << Reg;
  return Mask;
}

/// Reads one location's value, as the machine state at the call has it;
/// `Known` says which of `Regs` hold a value.
bool readLocation(const Parser &SP, const Location &L,
                  const SavedRegisters &Regs, uint32_t Known, uint64_t &Value,
                  std::string &Error) {
  auto Register = [&](uint64_t &Out) {
    unsigned Reg = L.getDwarfRegNum();
    if (Reg >= 32 || !(Known & (uint32_t(1) << Reg))) {
      Error = "location in DWARF register " + std::to_string(Reg) +
              ", which is not known at this call (the deopt call does not "
              "preserve it, or a frame walk cannot recover it)";
      return false;
    }
    Out = Regs.Regs[Reg];
    return true;
  };
  unsigned Size = L.getSizeInBytes();
  switch (L.getKind()) {
  case Kind::Constant:
    // Small constants are stored sign-extended from 32 bits.
    Value = uint64_t(int64_t(int32_t(L.getSmallConstant())));
    return true;
  case Kind::ConstantIndex:
    if (L.getConstantIndex() >= SP.getNumConstants()) {
      Error = "constant index " + std::to_string(L.getConstantIndex()) +
              " out of range";
      return false;
    }
    Value = SP.getConstant(L.getConstantIndex()).getValue();
    return true;
  case Kind::Register:
    if (!Register(Value))
      return false;
    if (Size < 8)
      Value &= (uint64_t(1) << (8 * Size)) - 1;
    return true;
  case Kind::Direct: {
    uint64_t Base;
    if (!Register(Base))
      return false;
    Value = Base + int64_t(L.getOffset());
    return true;
  }
  case Kind::Indirect: {
    uint64_t Base;
    if (!Register(Base))
      return false;
    if (Size == 0 || Size > 8) {
      Error = "indirect location of " + std::to_string(Size) + " bytes";
      return false;
    }
    Value = 0;
    std::memcpy(&Value, reinterpret_cast<const void *>(Base + L.getOffset()),
                Size);
    return true;
  }
  }
  Error = "unknown location kind " + std::to_string(unsigned(L.getKind()));
  return false;
}

bool isConstant(const Location &L, uint64_t &Value) {
  if (L.getKind() != Kind::Constant)
    return false;
  Value = uint64_t(int64_t(int32_t(L.getSmallConstant())));
  return true;
}

} // namespace

bool StackMapTable::decodeFrame(uint64_t ReturnAddress,
                                const SavedRegisters &Regs, DeoptFrame &Out,
                                std::string &Error, Arch A) const {
  return decodeFrameWith(ReturnAddress, Regs, preservedRegisters(A), Out,
                         Error);
}

bool StackMapTable::hasRecord(uint64_t ReturnAddress) const {
  std::shared_lock<std::shared_mutex> G(P->Lock);
  return P->ByReturnAddress.count(ReturnAddress) != 0;
}

bool StackMapTable::decodeFrameWith(uint64_t ReturnAddress,
                                    const SavedRegisters &Regs, uint32_t Known,
                                    DeoptFrame &Out, std::string &Error) const {
  std::shared_lock<std::shared_mutex> G(P->Lock);
  auto It = P->ByReturnAddress.find(ReturnAddress);
  if (It == P->ByReturnAddress.end()) {
    Error = "no stack map record for return address " +
            std::to_string(ReturnAddress);
    return false;
  }
  const RecordRef &Ref = It->second;
  const Parser &SP = *Ref.S->P;
  auto R = SP.getRecord(Ref.Index);
  Out.ReturnAddress = ReturnAddress;
  Out.FunctionAddress = Ref.FunctionAddress;
  Out.StackSize = Ref.StackSize;
  Out.RecordID = R.getID();
  std::memcpy(Out.CallArgs, Regs.Args, sizeof(Out.CallArgs));
  Out.Values.clear();
  Out.Monitors.clear();

  unsigned NumLocations = R.getNumLocations();
  uint64_t CC, Flags, NumDeopt;
  if (NumLocations < StatepointHeaderLocations ||
      !isConstant(R.getLocation(0), CC) ||
      !isConstant(R.getLocation(1), Flags) ||
      !isConstant(R.getLocation(2), NumDeopt) ||
      StatepointHeaderLocations + NumDeopt > NumLocations) {
    Error = "the record is not a statepoint's (no deopt operand header)";
    return false;
  }
  unsigned Begin = StatepointHeaderLocations;
  unsigned End = Begin + unsigned(NumDeopt);

  // The group is the bundle's end: the last marker whose count reaches it
  // exactly. (A kind is 0 or 1, never the marker.)
  unsigned Group = End;
  for (unsigned I = End; I >= Begin + 2; --I) {
    uint64_t Marker, Count;
    unsigned At = I - 2;
    if (isConstant(R.getLocation(At), Marker) && Marker == MonitorsMarker &&
        isConstant(R.getLocation(At + 1), Count) &&
        Count <= (End - At - 2) / 2 && At + 2 + 2 * Count == End) {
      Group = At;
      break;
    }
  }
  if (Group == End) {
    Error = "the deopt operands end in no monitor group";
    return false;
  }

  for (unsigned I = Begin; I != Group; ++I) {
    uint64_t V;
    if (!readLocation(SP, R.getLocation(I), Regs, Known, V, Error))
      return false;
    Out.Values.push_back(V);
  }
  for (unsigned I = Group + 2; I != End; I += 2) {
    uint64_t Obj, KindValue;
    if (!readLocation(SP, R.getLocation(I), Regs, Known, Obj, Error) ||
        !readLocation(SP, R.getLocation(I + 1), Regs, Known, KindValue, Error))
      return false;
    if (KindValue > JITLOCK_RELOCK_ELIDED) {
      Error = "monitor " + std::to_string((I - Group - 2) / 2) + " has kind " +
              std::to_string(KindValue);
      return false;
    }
    Out.Monitors.push_back(
        {reinterpret_cast<void *>(Obj), uint32_t(KindValue)});
  }
  return true;
}
