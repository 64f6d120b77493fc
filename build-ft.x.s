:
	push   %rbx
	mov    %rdi,%rbx
	sub    $,%rsp
	mov    (%rdi),%rax
	mov    (%rax),%rax
	movsd  (%rax),%xmm0
	mov    (%rdi),%eax
	test   %eax,%eax
	je     
	mov    (%rbx),%eax
	add    $,%rsp
	pop    %rbx
	ret
	nopl   (%rax)
	mov    (%rdi),%rax
	mov    (%rax),%rax
	mov    (%rax),%rdx
	mov    (%rdx),%edx
	mov    (%rax),%eax
	cmp    %eax,%edx
	jne    
	mov    (%rbx),%rax
	mov    (%rax),%eax
	test   %eax,%eax
	jne    
	mov    (%rbx),%rdi
	movsd  %xmm0,(%rsp)
	call   
	movsd  (%rsp),%xmm0
	test   %eax,%eax
	jne    
	pxor   %xmm2,%xmm2
	movsd  %xmm0,(%rsp)
	comisd %xmm2,%xmm0
	ja     
	mov    (%rbx),%eax
	test   %eax,%eax
	jne    
	mov    $,%eax
	jmp    
	nopl   (%rax)
	lea    (%rsp),%rsi
	mov    $,%edi
	call   
	pxor   %xmm1,%xmm1
	pxor   %xmm3,%xmm3
	pxor   %xmm2,%xmm2
	cvtsi2sdq (%rsp),%xmm1
	mulsd  (%rip),%xmm1        # 
	cvtsi2sdq (%rsp),%xmm3
	addsd  %xmm3,%xmm1
	movsd  (%rbx),%xmm3
	ucomisd %xmm2,%xmm3
	jp     
	jne    
	movsd  (%rsp),%xmm0
	addsd  %xmm1,%xmm0
	movsd  %xmm0,(%rbx)
	jmp    
	nopl   (%rax,%rax,1)
	mov    (%rbx),%rax
	mov    %rbx,%rdi
	mov    (%rax),%eax
	and    $,%eax
	cmp    $,%eax
	sbb    %esi,%esi
	xor    %edx,%edx
	and    $,%esi
	add    $,%esi
	call   
	mov    (%rbx),%eax
	test   %eax,%eax
	jne    
	jmp    
	nopw   (%rax,%rax,1)
	mov    (%rdi),%rax
	movsd  %xmm0,(%rsp)
	mov    (%rax),%rdi
	call   
	movsd  (%rsp),%xmm0
	jmp    
	xchg   %ax,%ax
	mov    %eax,%esi
	xor    %edx,%edx
	mov    %rbx,%rdi
	call   
	mov    (%rbx),%eax
	test   %eax,%eax
	jne    
	jmp    
	nopl   (%rax)
	comisd %xmm3,%xmm1
	jbe    
	mov    $,%edx
	mov    $,%esi
	mov    %rbx,%rdi
	call   
	jmp    
	data16 cs nopw (%rax,%rax,1)
	nopl   (%rax)

