# SAINV (Benzi, Cullum, Tuma 2000) in dense arrays, with three drop rules: unit (|z_kj| < tau on
# the unit upper factor), schur (tau sqrt(running Schur diagonal)), oracle (tau sqrt(exact pivot)).
# Usage: python3 sainv_dense.py A.mtx unit|schur|oracle TAU...
import scipy.io, scipy.sparse as sp, numpy as np, sys
A = scipy.io.mmread(sys.argv[1]).tocsr().astype(float)
n=A.shape[0]; d0=A.diagonal(); s=1/np.sqrt(abs(d0)); B=(sp.diags(s)@A@sp.diags(s)).tocsr()
Bd=B.toarray()
rng=np.random.default_rng(1); x=rng.uniform(-1,1,n); b=Bd@x
def pcg(M, tol=1e-8, maxit=30000):
    xk=np.zeros(n); r=b.copy(); z=M(r); p=z.copy(); rz=r@z; nb=np.linalg.norm(b)
    for k in range(maxit):
        q=Bd@p; a=rz/(p@q); xk+=a*p; r-=a*q
        if np.linalg.norm(r)<=tol*nb: return k+1
        z=M(r); rz2=r@z; p=z+rz2/rz*p; rz=rz2
    return maxit
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
    print(mode,"tau",tau,"Zfill",round(fill,2),"its",pcg(lambda r:Zs@(Zs.T@r)),"pivmin %.2e"%dd.min(),flush=True)
