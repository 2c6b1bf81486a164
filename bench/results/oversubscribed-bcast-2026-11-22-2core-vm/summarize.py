#!/usr/bin/env python3
"""Medians per np and size of the native, auto and slots-only runs in this folder, as a markdown table."""
import csv,glob,statistics as st,sys,os
D=sys.argv[1] if len(sys.argv) > 1 else "."; d={}
for f in glob.glob(D+'/*-np*-*.csv'):
    m,np,rep=os.path.basename(f)[:-4].split('-')
    for r in csv.DictReader(open(f)):
        d.setdefault((int(np[2:]),int(r['bytes']),m),[]).append(float(r['avg_us']))
print("| np | bytes | Open MPI (us) | shmcoll auto (us) | auto / Open MPI | shmcoll slots only (us) | slots / Open MPI |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for np in (4,8):
    for b in sorted({k[1] for k in d if k[0]==np}):
        n=st.median(d[(np,b,'native')]); a=st.median(d[(np,b,'auto')]); s=st.median(d[(np,b,'slots')])
        print(f"| {np} | {b} | {n:.1f} | {a:.1f} | {a/n:.2f} | {s:.1f} | {s/n:.2f} |")
