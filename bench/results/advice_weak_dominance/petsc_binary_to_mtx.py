import numpy as np, sys, gzip
def read_mats(fn):
    data = open(fn,'rb').read()
    off = 0; mats = []
    while off < len(data):
        cls, M, N, nz = np.frombuffer(data, '>i4', 4, off); off += 16
        assert cls == 1211216, cls
        rl = np.frombuffer(data, '>i4', M, off); off += 4*M
        cols = np.frombuffer(data, '>i4', nz, off); off += 4*nz
        vals = np.frombuffer(data, '>f8', nz, off); off += 8*nz
        mats.append((M, N, rl, cols, vals))
    return mats
def read_vecs(fn):
    data = open(fn,'rb').read(); off = 0; vs = []
    while off < len(data):
        cls, n = np.frombuffer(data, '>i4', 2, off); off += 8
        assert cls == 1211214
        vs.append(np.frombuffer(data, '>f8', n, off)); off += 8*n
    return vs
tag, which = sys.argv[1], int(sys.argv[2])
mats = read_mats(f'J_{tag}.bin'); vecs = read_vecs(f'b_{tag}.bin')
print(len(mats), 'matrices', len(vecs), 'vectors')
M, N, rl, cols, vals = mats[which]; b = vecs[which]
rows = np.repeat(np.arange(M), rl)
with gzip.open(f'ex19_{tag}_{which}.mtx.gz','wt') as f:
    f.write('%%MatrixMarket matrix coordinate real general\n')
    f.write(f'{M} {N} {len(vals)}\n')
    np.savetxt(f, np.column_stack([rows+1, cols+1, vals]), fmt='%d %d %.17g')
with gzip.open(f'ex19_{tag}_{which}_b.mtx.gz','wt') as f:
    f.write('%%MatrixMarket matrix array real general\n')
    f.write(f'{len(b)} 1\n')
    np.savetxt(f, b, fmt='%.17g')
print(M, len(vals), np.linalg.norm(b))
