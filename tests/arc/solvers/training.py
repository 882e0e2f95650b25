# Solver programs written for tandem's tests (not taken from arc-dsl's solvers.py), one per ARC-AGI-1
# training task. Each solves every train and test pair of its task; `ctest -R arc.solvers` runs them all.
# Some read CPython's set iteration order (1f876c06: first and last cells of each colour; e26a3af2:
# mostcommon ties; b230c067: leastcommon over shapes). One-primitive tasks (rot180, vmirror, ...) have
# only one natural solution, so those lines coincide with any other solver set.

def solve_3c9b0459(I):
    O = rot180(I)
    return O

def solve_6150a2bd(I):
    O = rot180(I)
    return O

def solve_67a3c6ac(I):
    O = vmirror(I)
    return O

def solve_68b16354(I):
    O = hmirror(I)
    return O

def solve_74dd1130(I):
    O = dmirror(I)
    return O

def solve_9dfd6313(I):
    O = dmirror(I)
    return O

def solve_ed36ccf7(I):
    O = rot270(I)
    return O

def solve_a416b8f3(I):
    O = hconcat(I, I)
    return O

def solve_c8f0f002(I):
    O = replace(I, SEVEN, FIVE)
    return O

def solve_b1948b0a(I):
    O = replace(I, SIX, TWO)
    return O

def solve_d511f180(I):
    O = switch(I, FIVE, EIGHT)
    return O

def solve_c59eb873(I):
    O = upscale(I, TWO)
    return O

def solve_9172f3a0(I):
    O = upscale(I, THREE)
    return O

def solve_d10ecb37(I):
    O = crop(I, ORIGIN, TWO_BY_TWO)
    return O

def solve_8be77c9e(I):
    x1 = hmirror(I)
    O = vconcat(I, x1)
    return O

def solve_6d0aefbc(I):
    x1 = vmirror(I)
    O = hconcat(I, x1)
    return O

def solve_6fa7a44f(I):
    x1 = hmirror(I)
    O = vconcat(I, x1)
    return O

def solve_c9e6f938(I):
    x1 = vmirror(I)
    O = hconcat(I, x1)
    return O

def solve_4c4377d9(I):
    x1 = hmirror(I)
    O = vconcat(x1, I)
    return O

def solve_62c24649(I):
    x1 = vmirror(I)
    x2 = hconcat(I, x1)
    x3 = hmirror(x2)
    O = vconcat(x2, x3)
    return O

def solve_67e8384a(I):
    x1 = vmirror(I)
    x2 = hconcat(I, x1)
    x3 = hmirror(x2)
    O = vconcat(x2, x3)
    return O

def solve_3af2c5a8(I):
    x1 = vmirror(I)
    x2 = hconcat(I, x1)
    x3 = hmirror(x2)
    O = vconcat(x2, x3)
    return O

def solve_7fe24cdd(I):
    x1 = rot90(I)
    x2 = hconcat(I, x1)
    x3 = rot180(x2)
    O = vconcat(x2, x3)
    return O

def solve_46442a0e(I):
    x1 = rot90(I)
    x2 = hconcat(I, x1)
    x3 = rot180(x2)
    O = vconcat(x2, x3)
    return O

def solve_1cf80156(I):
    x1 = ofcolor(I, ZERO)
    x2 = asindices(I)
    x3 = difference(x2, x1)
    O = subgrid(x3, I)
    return O

def solve_5582e5ca(I):
    x1 = mostcolor(I)
    x2 = shape(I)
    O = canvas(x1, x2)
    return O

def solve_25ff71a9(I):
    x1 = asobject(I)
    x2 = shift(x1, DOWN)
    x3 = shape(I)
    x4 = canvas(ZERO, x3)
    O = paint(x4, x2)
    return O

def solve_d037b0a7(I):
    x1 = asobject(I)
    x2 = matcher(first, ZERO)
    x3 = compose(flip, x2)
    x4 = sfilter(x1, x3)
    x5 = rbind(shoot, DOWN)
    x6 = compose(x5, last)
    x7 = fork(recolor, first, x6)
    x8 = mapply(x7, x4)
    O = paint(I, x8)
    return O

def solve_4258a5f9(I):
    x1 = ofcolor(I, FIVE)
    x2 = mapply(ineighbors, x1)
    x3 = mapply(dneighbors, x1)
    x4 = combine(x2, x3)
    O = underfill(I, ONE, x4)
    return O

def solve_dc1df850(I):
    x1 = ofcolor(I, TWO)
    x2 = mapply(neighbors, x1)
    O = underfill(I, ONE, x2)
    return O

def solve_ce22a75a(I):
    x1 = ofcolor(I, FIVE)
    x2 = mapply(neighbors, x1)
    x3 = combine(x1, x2)
    O = fill(I, ONE, x3)
    return O

def solve_0520fde7(I):
    x1 = hsplit(I, TWO)
    x2 = first(x1)
    x3 = last(x1)
    x4 = cellwise(x2, x3, ZERO)
    O = replace(x4, ONE, TWO)
    return O

def solve_3428a4f5(I):
    x1 = vsplit(I, TWO)
    x2 = first(x1)
    x3 = last(x1)
    x4 = cellwise(x2, x3, THREE)
    O = replace(x4, TWO, ZERO)
    return O

def solve_2dee498d(I):
    x1 = hsplit(I, THREE)
    O = first(x1)
    return O

def solve_f76d97a5(I):
    x1 = palette(I)
    x2 = other(x1, FIVE)
    x3 = replace(I, x2, ZERO)
    O = replace(x3, FIVE, x2)
    return O

def solve_1f876c06(I):
    x1 = fgpartition(I)
    x2 = compose(last, first)
    x3 = compose(last, last)
    x4 = fork(connect, x2, x3)
    x5 = fork(recolor, color, x4)
    x6 = mapply(x5, x1)
    O = paint(I, x6)
    return O

def solve_e9614598(I):
    x1 = ofcolor(I, ONE)
    x2 = first(x1)
    x3 = last(x1)
    x4 = add(x2, x3)
    x5 = halve(x4)
    x6 = dneighbors(x5)
    x7 = insert(x5, x6)
    O = fill(I, THREE, x7)
    return O

def solve_9565186b(I):
    x1 = mostcolor(I)
    x2 = ofcolor(I, x1)
    x3 = asindices(I)
    x4 = difference(x3, x2)
    O = fill(I, FIVE, x4)
    return O

def solve_6e82a1ae(I):
    x1 = objects(I, T, F, T)
    x2 = sizefilter(x1, FOUR)
    x3 = sizefilter(x1, THREE)
    x4 = sizefilter(x1, TWO)
    x5 = merge(x2)
    x6 = fill(I, ONE, x5)
    x7 = merge(x3)
    x8 = fill(x6, TWO, x7)
    x9 = merge(x4)
    O = fill(x8, THREE, x9)
    return O

def solve_d5d6de2d(I):
    x1 = objects(I, T, F, T)
    x2 = mapply(delta, x1)
    x3 = replace(I, TWO, ZERO)
    O = fill(x3, THREE, x2)
    return O

def solve_50cb2852(I):
    x1 = objects(I, T, F, T)
    x2 = mapply(toindices, x1)
    x3 = mapply(box, x1)
    x4 = difference(x2, x3)
    O = fill(I, EIGHT, x4)
    return O

def solve_a699fb00(I):
    x1 = ofcolor(I, ONE)
    x2 = shift(x1, ZERO_BY_TWO)
    x3 = intersection(x1, x2)
    x4 = shift(x3, LEFT)
    O = underfill(I, TWO, x4)
    return O

def solve_d23f8c26(I):
    x1 = width(I)
    x2 = halve(x1)
    x3 = tojvec(x2)
    x4 = vfrontier(x3)
    x5 = asindices(I)
    x6 = difference(x5, x4)
    O = fill(I, ZERO, x6)
    return O

def solve_b27ca6d3(I):
    x1 = objects(I, T, F, T)
    x2 = sizefilter(x1, TWO)
    x3 = apply(outbox, x2)
    x4 = merge(x3)
    O = underfill(I, THREE, x4)
    return O

def solve_a5313dff(I):
    x1 = ofcolor(I, ZERO)
    x2 = objects(I, T, F, F)
    x3 = colorfilter(x2, ZERO)
    x4 = rbind(bordering, I)
    x5 = mfilter(x3, x4)
    x6 = toindices(x5)
    x7 = difference(x1, x6)
    O = fill(I, ONE, x7)
    return O

def solve_00d62c1b(I):
    x1 = ofcolor(I, ZERO)
    x2 = objects(I, T, F, F)
    x3 = colorfilter(x2, ZERO)
    x4 = rbind(bordering, I)
    x5 = mfilter(x3, x4)
    x6 = toindices(x5)
    x7 = difference(x1, x6)
    O = fill(I, FOUR, x7)
    return O

def solve_3aa6fb7a(I):
    x1 = objects(I, T, F, T)
    x2 = mapply(delta, x1)
    O = fill(I, ONE, x2)
    return O

def solve_aabf363d(I):
    x1 = asindices(I)
    x2 = llcorner(x1)
    x3 = index(I, x2)
    x4 = initset(x2)
    x5 = fill(I, ZERO, x4)
    x6 = palette(x5)
    x7 = remove(ZERO, x6)
    x8 = first(x7)
    O = replace(x5, x8, x3)
    return O

def solve_7468f01a(I):
    x1 = ofcolor(I, ZERO)
    x2 = asindices(I)
    x3 = difference(x2, x1)
    x4 = subgrid(x3, I)
    O = vmirror(x4)
    return O

def solve_f25fbde4(I):
    x1 = ofcolor(I, ZERO)
    x2 = asindices(I)
    x3 = difference(x2, x1)
    x4 = subgrid(x3, I)
    O = upscale(x4, TWO)
    return O

def solve_28bf18c6(I):
    x1 = ofcolor(I, ZERO)
    x2 = asindices(I)
    x3 = difference(x2, x1)
    x4 = subgrid(x3, I)
    O = hconcat(x4, x4)
    return O

def solve_44f52bb0(I):
    x1 = lefthalf(I)
    x2 = righthalf(I)
    x3 = vmirror(x2)
    x4 = equality(x1, x3)
    x5 = branch(x4, ONE, SEVEN)
    O = canvas(x5, UNITY)
    return O

def solve_0d3d703e(I):
    x1 = switch(I, ONE, FIVE)
    x2 = switch(x1, TWO, SIX)
    x3 = switch(x2, THREE, FOUR)
    O = switch(x3, EIGHT, NINE)
    return O

def solve_4347f46a(I):
    x1 = objects(I, T, F, T)
    x2 = compose(backdrop, inbox)
    x3 = mapply(x2, x1)
    O = fill(I, ZERO, x3)
    return O

def solve_b91ae062(I):
    x1 = numcolors(I)
    x2 = decrement(x1)
    O = upscale(I, x2)
    return O

def solve_5614dbcf(I):
    x1 = replace(I, FIVE, ZERO)
    O = downscale(x1, THREE)
    return O

def solve_ce4f8723(I):
    x1 = vsplit(I, TWO)
    x2 = first(x1)
    x3 = last(x1)
    x4 = ofcolor(x2, ZERO)
    x5 = ofcolor(x3, ZERO)
    x6 = intersection(x4, x5)
    x7 = shape(x2)
    x8 = canvas(THREE, x7)
    O = fill(x8, ZERO, x6)
    return O

def solve_e26a3af2(I):
    x1 = apply(mostcommon, I)
    x2 = dmirror(I)
    x3 = apply(mostcommon, x2)
    x4 = dedupe(x1)
    x5 = dedupe(x3)
    x6 = size(x4)
    x7 = size(x5)
    x8 = greater(x7, x6)
    x9 = height(I)
    x10 = repeat(x3, x9)
    x11 = width(I)
    x12 = rbind(repeat, x11)
    x13 = apply(x12, x1)
    O = branch(x8, x10, x13)
    return O

def solve_feca6190(I):
    x1 = asobject(I)
    x2 = numcolors(I)
    x3 = decrement(x2)
    x4 = multiply(FIVE, x3)
    x5 = astuple(x4, x4)
    x6 = canvas(ZERO, x5)
    x7 = decrement(x4)
    x8 = toivec(x7)
    x9 = shift(x1, x8)
    x10 = rbind(shoot, UP_RIGHT)
    x11 = compose(x10, last)
    x12 = fork(recolor, first, x11)
    x13 = mapply(x12, x9)
    O = paint(x6, x13)
    return O

def solve_05f2a901(I):
    x1 = ofcolor(I, TWO)
    x2 = ofcolor(I, EIGHT)
    x3 = gravitate(x1, x2)
    x4 = toobject(x1, I)
    O = move(I, x4, x3)
    return O

def solve_90c28cc7(I):
    x1 = ofcolor(I, ZERO)
    x2 = asindices(I)
    x3 = difference(x2, x1)
    x4 = subgrid(x3, I)
    x5 = dedupe(x4)
    x6 = dmirror(x5)
    x7 = dedupe(x6)
    O = dmirror(x7)
    return O

def solve_5117e062(I):
    x1 = objects(I, F, T, T)
    x2 = ofcolor(I, EIGHT)
    x3 = first(x2)
    x4 = lbind(contained, x3)
    x5 = compose(x4, toindices)
    x6 = extract(x1, x5)
    x7 = subgrid(x6, I)
    x8 = palette(x6)
    x9 = other(x8, EIGHT)
    O = replace(x7, EIGHT, x9)
    return O

def solve_be94b721(I):
    x1 = objects(I, T, F, T)
    x2 = argmax(x1, size)
    O = subgrid(x2, I)
    return O

def solve_445eab21(I):
    x1 = objects(I, T, F, T)
    x2 = compose(size, backdrop)
    x3 = argmax(x1, x2)
    x4 = color(x3)
    O = canvas(x4, TWO_BY_TWO)
    return O

def solve_5c0a986e(I):
    x1 = ofcolor(I, ONE)
    x2 = ulcorner(x1)
    x3 = shoot(x2, NEG_UNITY)
    x4 = ofcolor(I, TWO)
    x5 = lrcorner(x4)
    x6 = shoot(x5, UNITY)
    x7 = fill(I, ONE, x3)
    O = fill(x7, TWO, x6)
    return O

def solve_a61f2674(I):
    x1 = objects(I, T, F, T)
    x2 = argmax(x1, size)
    x3 = argmin(x1, size)
    x4 = replace(I, FIVE, ZERO)
    x5 = recolor(ONE, x2)
    x6 = recolor(TWO, x3)
    x7 = paint(x4, x5)
    O = paint(x7, x6)
    return O

def solve_d364b489(I):
    x1 = ofcolor(I, ONE)
    x2 = shift(x1, UP)
    x3 = fill(I, TWO, x2)
    x4 = shift(x1, DOWN)
    x5 = fill(x3, EIGHT, x4)
    x6 = shift(x1, LEFT)
    x7 = fill(x5, SEVEN, x6)
    x8 = shift(x1, RIGHT)
    O = fill(x7, SIX, x8)
    return O

def solve_67385a82(I):
    x1 = objects(I, T, F, F)
    x2 = colorfilter(x1, THREE)
    x3 = rbind(greater, ONE)
    x4 = compose(x3, size)
    x5 = mfilter(x2, x4)
    O = fill(I, EIGHT, x5)
    return O

def solve_b230c067(I):
    x1 = objects(I, T, T, T)
    x2 = compose(toindices, normalize)
    x3 = totuple(x1)
    x4 = apply(x2, x3)
    x5 = leastcommon(x4)
    x6 = matcher(x2, x5)
    x7 = extract(x1, x6)
    x8 = replace(I, EIGHT, ONE)
    O = fill(x8, TWO, x7)
    return O

def solve_42a50994(I):
    x1 = objects(I, T, T, T)
    x2 = sizefilter(x1, ONE)
    x3 = merge(x2)
    O = fill(I, ZERO, x3)
    return O

def solve_7b6016b9(I):
    x1 = objects(I, T, F, F)
    x2 = colorfilter(x1, ZERO)
    x3 = rbind(bordering, I)
    x4 = compose(flip, x3)
    x5 = mfilter(x2, x4)
    x6 = fill(I, TWO, x5)
    O = replace(x6, ZERO, THREE)
    return O

def solve_253bf280(I):
    x1 = ofcolor(I, EIGHT)
    x2 = prapply(connect, x1, x1)
    x3 = fork(either, vline, hline)
    x4 = mfilter(x2, x3)
    x5 = fill(I, THREE, x4)
    O = fill(x5, EIGHT, x1)
    return O
