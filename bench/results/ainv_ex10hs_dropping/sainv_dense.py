# SAINV (Benzi, Cullum, Tuma 2000) in dense arrays, with three drop rules: unit (|z_kj| < tau on
# the unit upper factor), schur (tau sqrt(running Schur diagonal)), oracle (tau sqrt(exact pivot)).
# Usage: python3 sainv_dense.py A.mtx unit|schur|oracle TAU...
import sys
import numpy as np
import scipy.sparse as sp
from scaled_system import load, pcg
A, Bd, b = load(sys.argv[1])
n = A.shape[0]; B = sp.csr_matrix(Bd)
mode=sys.argv[2]
import scipy.linalg as la
L=la.cholesky(Bd,lower=True); dex=np.diag(L)**2
for tau in map(float,sys.argv[3:]):
    Z=np.eye(n); dd=np.zeros(n); schur=np.ones(n)
    for i in range(n):
        zi=Z[:,i]; u=B@zi; dd[i]=zi@u
        th=u@Z[:,i+1:]; idx=np.nonzero(th)[0]+i+1
        c=th[idx-i-1]/dd[i]
        Zj=Z[:,idx]-np.outer(zi,c)
        schur[idx]-=c*c*dd[i]
        if mode=='unit': cut=tau
        elif mode=='oracle': cut=tau*np.sqrt(dex[idx])[None,:]
        else: cut=tau*np.sqrt(np.maximum(schur[idx],1e-300))[None,:]
        keep=abs(Zj)>=cut
        keep[idx,np.arange(len(idx))]=True
        Z[:,idx]=np.where(keep,Zj,0)
    Zs=Z/np.sqrt(dd)[None,:]
    fill=(Z!=0).sum()/A.nnz
    print(mode,"tau",tau,"Zfill",round(fill,2),"its",pcg(Bd, b, lambda r:Zs@(Zs.T@r)),"pivmin %.2e"%dd.min(),flush=True)
