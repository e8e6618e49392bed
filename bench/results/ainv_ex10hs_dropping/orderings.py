# Writes A in natural (nat.mtx), minimum-degree (md.mtx) and nested-dissection (nd.mtx, METIS
# through pymetis) orderings. Usage: python3 orderings.py ex10hs.mtx.gz
import scipy.io, scipy.sparse as sp, numpy as np, sys, gzip, pymetis, heapq
A = scipy.io.mmread(gzip.open(sys.argv[1]) if sys.argv[1].endswith('.gz') else sys.argv[1]).tocsr()
n = A.shape[0]; print(n, A.nnz)
G = (abs(A)+abs(A.T)).tocsr(); G.setdiag(0); G.eliminate_zeros()
adj = [G.indices[G.indptr[i]:G.indptr[i+1]].tolist() for i in range(n)]
def write(perm, name):
    p = np.asarray(perm); B = A[p][:, p]
    scipy.io.mmwrite(name, B.tocoo(), symmetry='symmetric')
# nested dissection
opts = pymetis.Options(); 
perm, iperm = pymetis.nested_dissection(adjacency=adj)
write(perm, 'nd.mtx')
# minimum degree (exact, simple)
nbr = [set(a) for a in adj]; alive = np.ones(n, bool); order=[]
heap = [(len(nbr[i]), i) for i in range(n)]; heapq.heapify(heap)
while heap:
    d,i = heapq.heappop(heap)
    if not alive[i] or d != len(nbr[i]): continue
    alive[i]=False; order.append(i)
    N = nbr[i]
    for u in N:
        nbr[u].discard(i); nbr[u] |= (N - {u})
        heapq.heappush(heap,(len(nbr[u]),u))
write(order, 'md.mtx')
write(np.arange(n), 'nat.mtx')
