# The three example solvers of spec §5.4, written for the specification.
from dsl import *
from constants import *


def solve_a79310a0(I):
    x1 = ofcolor(I, EIGHT)
    x2 = shift(x1, DOWN)
    x3 = shape(I)
    x4 = canvas(ZERO, x3)
    O = fill(x4, TWO, x2)
    return O


def solve_6f8cd79b(I):
    x1 = asindices(I)
    x2 = box(x1)
    O = fill(I, EIGHT, x2)
    return O


def solve_d631b094(I):
    x1 = palette(I)
    x2 = remove(ZERO, x1)
    x3 = first(x2)
    x4 = lbind(colorcount, I)
    x5 = x4(x3)
    x6 = astuple(ONE, x5)
    O = canvas(x3, x6)
    return O
