# The README's figures, from the data scripts/bench.sh writes (gnuplot 5, Debian gnuplot-nox):
#   gnuplot -e "dir='build/bench'; out='docs/img'" scripts/plot.gp
# gelu_errors.svg: the GELU approximations minus exact GELU over [-6, 6]
#   (nonlin_accuracy --gelu-curve);
# throughput.svg: nonlin's and the fast tier's throughput over the fastest peer's, float, 256K
#   elements, forward and backward (bench/report.py --plot-data);
# accuracy.svg: max ULP per function, nonlin and the peers (bench/accuracy_figure.py).
if (!exists("dir")) dir = 'build/bench'
if (!exists("out")) out = 'docs/img'
set datafile missing "-"
set datafile separator "\t"

set terminal svg size 900,420 dynamic font "sans,12" background "white"
set output out.'/gelu_errors.svg'
set title "GELU approximations minus exact GELU (x * Phi(x)), double"
set xlabel "x"
set ylabel "approximation - exact"
set grid
set key top left
set xrange [-6:6]
plot dir.'/gelu_curve.tsv' using 1:2 with lines lw 2 title "gelu\\_tanh (0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))))", \
     ''                   using 1:3 with lines lw 2 title "gelu\\_quick (x sigmoid(1.702x))"

set output out.'/throughput.svg'
set terminal svg size 1400,520 dynamic font "sans,11" background "white" noenhanced
set title "Throughput relative to the fastest peer of each row, float, 256K elements (log scale; 1 = as fast)"
unset xlabel
set ylabel "nonlin / fastest peer"
set xrange [*:*]
set logscale y
set yrange [0.1:4]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -60 font "sans,9" nomirror
set key top right horizontal
set grid ytics
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lw 2 dt 2 lc rgb "black"
plot for [col=2:3] dir.'/throughput.tsv' using col:xtic(1) title columnhead(col)
unset arrow 1

# accuracy.svg: max ULP of every function over the float range, nonlin and each peer, forward
# (top) and derivative (bottom), log scale (bench/accuracy_figure.py from nonlin_accuracy).
set output out.'/accuracy.svg'
set terminal svg size 1400,900 dynamic font "sans,11" background "white" noenhanced
set multiplot layout 2,1
set ylabel "max ULP (log)"
set yrange [0.1:1e9]
set ytics ("0.1" 0.1, "1" 1, "10" 10, "100" 100, "10^4" 1e4, "10^6" 1e6, "inf, 10^8+" 1e8)
set title "Forward: max error in ULP, float (0 drawn at 0.1, infinite or above 10^8 at 10^8)"
plot for [col=2:*] dir.'/accuracy_forward.tsv' using col:xtic(1) title columnhead(col)
set title "Derivative (backward with dy = 1)"
plot for [col=2:*] dir.'/accuracy_derivative.tsv' using col:xtic(1) title columnhead(col)
unset multiplot
