(function(){
  var q=document.getElementById('q'), buttons=[].slice.call(document.querySelectorAll('.seg button'));
  var items=[].slice.call(document.querySelectorAll('article.j')), count=document.getElementById('count');
  var none=document.getElementById('none'), status='all';
  function matches(el){
    var s=el.getAttribute('data-status');
    if(status==='failed'&&s!=='failed'&&s!=='error')return false;
    if(status==='near'&&s!=='near')return false;
    if(status==='passed'&&s!=='passed'&&s!=='near')return false;
    if(status==='error'&&s!=='error')return false;
    if(status==='drift'&&el.getAttribute('data-drift')!=='1')return false;
    var text=q.value.trim().toLowerCase();
    if(!text)return true;
    return text.split(/\s+/).every(function(w){return el.textContent.toLowerCase().indexOf(w)>=0;});
  }
  function apply(){
    var shown=0;
    items.forEach(function(el){var ok=matches(el);el.hidden=!ok;if(ok)shown++;});
    buttons.forEach(function(b){b.setAttribute('aria-pressed',String(b.getAttribute('data-filter')===status));});
    count.textContent='showing '+shown+' of '+items.length;
    document.body.setAttribute('data-shown',String(shown));
    none.hidden=shown!==0;
    var h='status='+encodeURIComponent(status)+(q.value?'&q='+encodeURIComponent(q.value):'');
    try{history.replaceState(null,'','#'+h);}catch(e){}
  }
  buttons.forEach(function(b){b.addEventListener('click',function(){status=b.getAttribute('data-filter');apply();});});
  q.addEventListener('input',apply);
  var hash=location.hash.replace(/^#/,'');
  hash.split('&').forEach(function(part){
    var kv=part.split('='), v=decodeURIComponent((kv[1]||'').replace(/\+/g,' '));
    if(kv[0]==='status'&&buttons.some(function(b){return b.getAttribute('data-filter')===v;}))status=v;
    if(kv[0]==='q')q.value=v;
  });
  apply();
  document.body.setAttribute('data-ready','1');
})();
