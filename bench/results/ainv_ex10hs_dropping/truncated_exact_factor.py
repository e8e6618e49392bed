# PCG on S A S (unit diagonal) preconditioned by the exact inverse Cholesky factor with its small
# entries dropped afterwards (no dropping during a factorization). Usage: python3 truncated_exact_factor.py A.mtx
import sys
import numpy as np
import scipy.linalg as la
from scaled_system import load, pcg
A, B, b = load(sys.argv[1])
n = A.shape[0]
L=la.cholesky(B,lower=True); Z=la.solve_triangular(L,np.eye(n),lower=True).T  # Z = L^-T, B^-1 = Z Z^T
print("cond(B)=%.3g"%np.linalg.cond(B), "max|Z|=%.3g"%abs(Z).max())
print("jacobi", pcg(B, b, lambda r:r))
for tau in [0.3,0.1,0.03,0.01]:
    Zt=np.where(abs(Z)>=tau,Z,0); np.fill_diagonal(Zt,np.diag(Z))
    # scaled by exact pivots (Z already includes 1/sqrt(d))
    print("tau",tau,"fill",(Zt!=0).sum()/ (A.nnz), pcg(B, b, lambda r:Zt@(Zt.T@r)))
    # relative dropping per column
    cm=abs(Z).max(axis=0); Zr=np.where(abs(Z)>=tau*cm,Z,0)
    print("  colrel fill",(Zr!=0).sum()/A.nnz, pcg(B, b, lambda r:Zr@(Zr.T@r)))
dj=1/np.diag(Z)**2  # pivots
Zu=Z*np.sqrt(dj)[None,:]
print("unit: max|Zu|=%.3g"%abs(Zu).max(), "pivots min %.3g max %.3g"%(dj.min(),dj.max()))
for tau in [0.1,0.03,0.01]:
    Zt=np.where(abs(Zu)>=tau,Zu,0); np.fill_diagonal(Zt,1.0)
    Zs=Zt/np.sqrt(dj)[None,:]
    print("unit tau",tau,"fill",(Zt!=0).sum()/A.nnz, pcg(B, b, lambda r:Zs@(Zs.T@r)))
