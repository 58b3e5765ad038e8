// Write amplification and lifetime in closed form.
#pragma once

#include <cstdint>

#include "models/ssd/ftl/ftl_config.h"

namespace ispsim::ftl {

// Steady-state write amplification of greedy GC under uniform random
// overwrites on a full drive, in the limit of large blocks (Desnoyers,
// "Analytic modeling of SSD write performance", SYSTOR 2012, the LRW/greedy
// limit; the same expression as Xiang and Kurkoski, "An improved analytic
// expression for write amplification in NAND flash", ICNC 2012):
//
//   alpha = T / U = 1 / (1 - spare_factor)
//   WAF   = alpha / (alpha + W0(-alpha e^-alpha))
//
// W0 the principal branch of Lambert's W. A victim's valid fraction u solves
// u = exp(-alpha (1 - u)) and WAF = 1 / (1 - u).
double greedy_waf_model(double spare_factor);

// The spare factor the model sees on this FTL: the models count every
// physical page in the log, while this FTL holds foreground_free_lines() lines
// free as GC's copy destination, so the log is T = physical pages minus those
// lines and the spare factor is 1 - U / T.
double log_spare_factor(const FtlConfig& config);

// Principal branch of Lambert's W for x in [-1/e, 0] (w e^w = x, w >= -1).
double lambert_w0(double x);

// Days until the rated P/E budget is spent, with every block worn evenly:
// endurance x physical bytes / (waf x host bytes per day).
double lifetime_days(const FtlConfig& config, double waf, double host_bytes_per_day);

}  // namespace ispsim::ftl
