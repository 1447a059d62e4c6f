# The README's figures, from the data scripts/bench.sh writes (gnuplot 5, Debian gnuplot-nox):
#   gnuplot -e "dir='build/bench'; out='docs/img'" scripts/plot.gp
# gelu_errors.svg: the GELU approximations minus exact GELU over [-6, 6]
#   (nonlin_accuracy --gelu-curve);
# throughput.svg: elements/ns of nonlin and every peer, float, 256K elements, forward and
#   backward (bench/report.py --plot-data).
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
set terminal svg size 1400,560 dynamic font "sans,11" background "white" noenhanced
set title "Throughput, float, 256K elements (elements/ns, log scale, higher is better)"
unset xlabel
set ylabel "elements / ns"
set xrange [*:*]
set logscale y
set yrange [0.05:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -60 font "sans,9" nomirror
set key top right horizontal
set grid ytics
plot for [col=2:9] dir.'/throughput.tsv' using col:xtic(1) title columnhead(col)
