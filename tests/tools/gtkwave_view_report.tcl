# Run by GTKWave (gtkwave -S this.tcl X.gtkw) for tests/tools/gtkwave_view_test.cc:
# takes a screenshot of the view as it opened, then reports what GTKWave shows —
# its time window, named markers, every trace with its flags, and the value it
# displays for each signal of the open groups at the times in
# ISPSIM_GTKWAVE_TIMES — and quits.
set report [open $::env(ISPSIM_GTKWAVE_REPORT) w]

# The view as a person first sees it.
exec xwd -root -silent -out $::env(ISPSIM_GTKWAVE_SHOT)

puts $report "dump [gtkwave::getDumpFileName]"
puts $report "window [gtkwave::getWindowStartTime] [gtkwave::getWindowEndTime]"
foreach letter {A B C D E F G H I J K L M N O P Q R S T U V W X Y Z} {
  set at [gtkwave::getNamedMarker $letter]
  if {$at >= 0} { puts $report "marker $letter $at" }
}
puts $report "displayed [llength [gtkwave::getDisplayedSignals]]"

# Traces shown with a value: not group borders (blank, 0x200), not inside a
# closed group (its border has 0x400000).
set shown {}
set closed 0
set count [gtkwave::getTotalNumTraces]
for {set i 0} {$i < $count} {incr i} {
  set flags [gtkwave::getTraceFlagsFromIndex $i]
  set name [gtkwave::getTraceNameFromIndex $i]
  puts $report "trace $flags $name"
  if {$flags & 0x800000} { set closed [expr {($flags & 0x400000) != 0}] }
  if {$flags & 0x1000000} { set closed 0 }
  if {!($flags & 0x200) && !$closed} { lappend shown $i }
}

# Values as displayed (through the translate filters) at the primary marker:
# one redraw per time, then each trace's displayed value.
foreach at $::env(ISPSIM_GTKWAVE_TIMES) {
  gtkwave::setMarker $at
  foreach i $shown {
    puts $report "value $at [gtkwave::getTraceNameFromIndex $i] [gtkwave::getTraceValueAtMarkerFromIndex $i]"
  }
}
close $report
gtkwave::/File/Quit
