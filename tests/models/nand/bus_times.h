// The default flash's bus protocol (schema/nand.proto: ONFI command, address
// and status cycles and turnaround times), written out from the published
// values for closed-form tests: what each page, program and erase adds to
// the channel beside its data.
#pragma once

#include <systemc>

namespace ispsim::nand::testing {


inline const sc_core::sc_time kCycle(25, sc_core::SC_NS);  // one command or address cycle (tWC)
inline const sc_core::sc_time kTwb(100, sc_core::SC_NS), kTwhr(80, sc_core::SC_NS), kTrhw(100, sc_core::SC_NS);
inline const sc_core::sc_time kTadl(400, sc_core::SC_NS), kTccs(300, sc_core::SC_NS);
inline constexpr double kAddressCycles = 5;  // 2 column + 3 row
inline constexpr double kRowCycles = 3;

// 00h, 5 address cycles, 30h, tWB: the read command before tR.
inline const sc_core::sc_time kReadCommand = (2 + kAddressCycles) * kCycle + kTwb;
// 70h, tWHR, the status byte, tRHW.
inline const sc_core::sc_time kStatusPoll = 2 * kCycle + kTwhr + kTrhw;
// A data-out beside its data tOut: the sense's first page (status poll, 00h)
// and any other page of a multi-plane sense (06h, 5 address cycles, E0h, tCCS).
inline const sc_core::sc_time kFirstPageExtra = kReadCommand + kStatusPoll + kCycle + kTrhw;
inline const sc_core::sc_time kOtherPageExtra = kReadCommand + (2 + kAddressCycles) * kCycle + kTccs + kTrhw;
// A data-in beside its data: 80h, 5 address cycles, tADL, then 10h, tWB, and the status poll after tPROG.
inline const sc_core::sc_time kProgramExtra = (2 + kAddressCycles) * kCycle + kTadl + kTwb + kStatusPoll;
// An erase's bus transaction: 60h, 3 row cycles, D0h, tWB, and the status poll after tBERS.
inline const sc_core::sc_time kEraseBus = (2 + kRowCycles) * kCycle + kTwb + kStatusPoll;

}  // namespace ispsim::nand::testing
