"""Structural lint for the test corpus: test blocks parse, every case has
an output or error, value literals are well-formed and regular, entry points
exist, and input/output counts and types match the entry signatures
(approximately, by regex).  Usage: python3 tests/tools/lint_corpus.py"""
import re, os, sys
root=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
TOK=re.compile(r'\s*(empty\(\s*(?:\[\d+\])+\w+\s*\)|-?(?:\d[\d_]*\.?\d*(?:[eE][+-]?\d+)?|\.\d+)(?:i8|i16|i32|i64|u8|u16|u32|u64|f16|f32|f64)?|true|false|\[|\]|,|-?f(?:16|32|64)\.(?:inf|nan))')
def vtype(tok):
    m=re.match(r'-?[\d_.eE+-]+(i8|i16|i32|i64|u8|u16|u32|u64|f16|f32|f64)?$',tok)
    if tok in('true','false'): return 'bool'
    if tok.startswith('empty'):
        return 'arr:'+re.search(r'\](\w+)\s*\)',tok).group(1)+':'+str(tok.count('['))
    if m:
        if m.group(1): return m.group(1)
        return 'f64' if re.search(r'[.eE]',tok) else 'i32'
    if 'f16.' in tok or 'f32.' in tok or 'f64.' in tok: return tok.lstrip('-')[:3]
    raise Exception("bad token "+tok)
def parse_values(s):
    toks=[];pos=0
    s=s.strip()
    while pos<len(s):
        m=TOK.match(s,pos)
        if not m or m.end()==pos: raise Exception("cannot tokenize at: "+s[pos:pos+30])
        toks.append(m.group(1)); pos=m.end()
        while pos<len(s) and s[pos].isspace(): pos+=1
    i=0; vals=[]
    def val():
        nonlocal i
        t=toks[i]
        if t=='[':
            i+=1; elems=[]
            while toks[i]!=']':
                elems.append(val())
                if toks[i]==',': i+=1
            i+=1
            ts=set(e[0] for e in elems)
            if len(ts)>1: raise Exception("mixed element types %s"%ts)
            shapes=set(e[1] for e in elems)
            if len(shapes)>1: raise Exception("irregular array")
            et=elems[0][0]; sh=elems[0][1]
            return (et,(len(elems),)+sh)
        i+=1
        vt=vtype(t)
        if vt.startswith('arr:'):
            _,et,r=vt.split(':'); return (et,('E',int(r)))
        return (vt,())
    while i<len(toks):
        vals.append(val())
    return vals
def rank(v):
    et,sh=v
    if sh and sh[0]=='E': return et, sh[1]
    return et,len(sh)
problems=0
CNT=[0]
for dp,dn,fn in os.walk(root):
    for f in fn:
        if not f.endswith('.fut'): continue
        p=os.path.join(dp,f); src=open(p).read()
        if not src.endswith('\n'): print(p,"no final newline"); problems+=1
        lines=src.split('\n')
        # collect comment blocks
        blocks=[];cur=[]
        for ln in lines+['']:
            if ln.startswith('--'): cur.append(ln[2:])
            else:
                if cur: blocks.append(cur); cur=[]
        tblocks=[b for b in blocks if any(x.strip()=='==' for x in b)]
        if not tblocks:
            if 'lib/' not in p: print(p,"NO TEST BLOCK"); problems+=1
            continue
        for b in tblocks:
            k=[x.strip() for x in b].index('==')
            body=" ".join(b[k+1:])
            entries=['main']
            m=re.search(r'entry:\s*([\w ]+?)\s*(?=input|random|error:|$|\")',body)
            if m: entries=m.group(1).split()
            for e in entries:
                if e=='main':
                    if not re.search(r'^(def|entry) main\b',src,re.M) and 'error:' not in body.split('input')[0]: print(p,"no main"); problems+=1
                elif not re.search(r'^entry %s\b'%e,src,re.M): print(p,"missing entry",e); problems+=1
            # parse cases
            rest=re.sub(r'entry:\s*[\w ]+?(?=\s(?:input|random|error:))','',body)
            if rest.strip().startswith('error:') : continue
            for cm in re.finditer(r'(random\s+)?input\s*(\{(.*?)\}|@\s*(\S+))\s*(output\s*(\{(.*?)\}|@\s*(\S+))|error:\s*(\S+))?',rest):
                if cm.group(5) is None: print(p,"case without output/error:",cm.group(0)[:60]); problems+=1; continue
                if cm.group(4):
                    if not os.path.exists(os.path.join(dp,cm.group(4))): print(p,"missing file",cm.group(4)); problems+=1
                    continue
                if cm.group(1): continue
                CNT[0]+=1
                try:
                    ins=parse_values(cm.group(3))
                    outs=parse_values(cm.group(7)) if cm.group(7) is not None else None
                except Exception as ex:
                    print(p,"VALUE ERROR",ex,cm.group(0)[:80]); problems+=1; continue
                # compare with entry signature
                e=entries[0]
                sm=re.search(r'^(?:def|entry) %s\b(.*?)=\s*$|^(?:def|entry) %s\b(.*?)\s=\s'%(e,e),src,re.M|re.S)
                sig=None
                mm=re.search(r'^(?:def|entry) %s\b((?:.|\n)*?)(?<![<>=!])=(?![=>])'%e,src,re.M)
                if mm: sig=mm.group(1)
                if sig:
                    params=re.findall(r'\((?:[\w_]+|_)\s*:\s*(\*?(?:\[[^\]]*\])*\w+)\)',sig)
                    # An entry point defined as a function value (no return
                    # annotation, or one with `->`) takes more parameters
                    # than it writes: its type gives the rest.
                    ret=sig.rsplit(')',1)[-1]
                    function_value=len(params)<len(ins) and (':' not in ret or '->' in ret)
                    if len(params)!=len(ins) and not function_value: print(p,e,"arity mismatch: %d params, %d inputs"%(len(params),len(ins)),params); problems+=1
                    else:
                        for pt,v in zip(params,ins):
                            et=re.sub(r'^\*','',pt); r=et.count('['); base=re.sub(r'\[[^\]]*\]','',et)
                            ve,vr=rank(v)
                            if (base,r)!=(ve,vr) and base not in ('t','num'): print(p,e,"param type",pt,"vs value",v); problems+=1
                    rm=re.search(r'\)\s*:\s*(.*)$',sig.strip(),re.S)
                    if rm and outs is not None:
                        rt=rm.group(1).strip()
                        if rt.startswith('(') and rt.endswith(')'):
                            inner=rt[1:-1]; depth=0; parts=[''];
                            for ch in inner:
                                if ch in '([{': depth+=1
                                if ch in ')]}': depth-=1
                                if ch==',' and depth==0: parts.append('')
                                else: parts[-1]+=ch
                            rts=[x.strip() for x in parts]
                        else: rts=[rt]
                        if len(rts)!=len(outs): print(p,e,"output arity: %d types %d values"%(len(rts),len(outs)),rts); problems+=1
                        else:
                            for t,v in zip(rts,outs):
                                t=t.lstrip('*'); r=t.count('['); base=re.sub(r'\[[^\]]*\]','',t).strip()
                                ve,vr=rank(v)
                                if base in('len','num','intpair'): continue
                                if (base,r)!=(ve,vr): print(p,e,"out type",t,"vs value",v); problems+=1
print("problems:",problems,"cases",CNT[0])
